#include "agent/health_gpu.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "build_paths.h"

namespace cc::agent {
namespace {

using nlohmann::json;

const std::string kGpuNode = std::string(CLUSTERCHECK_FIXTURES) + "/sysroot-gpu-node";

// A fake NVML whose GPUs answer with the values below; handles are index + 1.
// The defaults are the H200 of /work/shared/fixtures/health (nvidia-smi:
// gen 5/5, x16/x16, no uncorrected ECC error, clocks event reasons 0x1
// (idle), 44 C, 121.05 W, clocks SM 405 / memory 3201 / SM max 1980 MHz,
// no NVLink, fabric N/A).
struct FakeGpu {
  std::string bus = "00000000:00:06.0";
  unsigned gen = 5, max_gen = 5, width = 16, max_width = 16;
  unsigned long long ecc_volatile = 0, ecc_aggregate = 0, reasons = 0x1;
  unsigned temp = 44, power_mw = 121050, mig = 0;
  int sm_mhz = 405, mem_mhz = 3201, sm_max_mhz = 1980;  // -1: NOT_SUPPORTED
  unsigned links = 0;                                   // NVLinks, all active, to NVSwitches
  unsigned long long link_errors = 0;                   // every counter of every link
  bool link_counters = true;                            // false: the counters are NOT_SUPPORTED
  int fabric_state = -1;                                // -1: NOT_SUPPORTED
};
std::vector<FakeGpu> g_gpus;

const FakeGpu& Gpu(nvmlDevice_t d) { return g_gpus[reinterpret_cast<uintptr_t>(d) - 1]; }

nvmlReturn_t Ok() { return kNvmlSuccess; }
const char* ErrStr(nvmlReturn_t r) { return r == 0 ? "Success" : "Not Supported"; }
nvmlReturn_t Driver(char* b, unsigned) { return std::strcpy(b, "580.159.04"), kNvmlSuccess; }
nvmlReturn_t Count(unsigned* c) { return *c = static_cast<unsigned>(g_gpus.size()), kNvmlSuccess; }
nvmlReturn_t Handle(unsigned i, nvmlDevice_t* d) {
  *d = reinterpret_cast<nvmlDevice_t>(static_cast<uintptr_t>(i + 1));
  return kNvmlSuccess;
}
nvmlReturn_t Name(nvmlDevice_t, char* b, unsigned) {
  return std::strcpy(b, "NVIDIA H200"), kNvmlSuccess;
}
nvmlReturn_t Pci(nvmlDevice_t d, NvmlPciInfo* p) {
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->busId, Gpu(d).bus.c_str());
  return kNvmlSuccess;
}
nvmlReturn_t Ecc(nvmlDevice_t, int* cur, int* pend) { return *cur = *pend = 1, kNvmlSuccess; }
nvmlReturn_t Retired(nvmlDevice_t, int* p) { return *p = 0, kNvmlSuccess; }
nvmlReturn_t Remapped(nvmlDevice_t, unsigned* c, unsigned* u, unsigned* p, unsigned* f) {
  return *c = *u = *p = *f = 0, kNvmlSuccess;
}
nvmlReturn_t Persist(nvmlDevice_t, int* m) { return *m = 1, kNvmlSuccess; }
nvmlReturn_t LinkState(nvmlDevice_t d, unsigned l, int* active) {
  if (Gpu(d).links == 0) return kNvmlErrorNotSupported;
  if (l >= Gpu(d).links) return kNvmlErrorInvalidArgument;
  return *active = 1, kNvmlSuccess;
}
nvmlReturn_t Gen(nvmlDevice_t d, unsigned* v) { return *v = Gpu(d).gen, kNvmlSuccess; }
nvmlReturn_t MaxGen(nvmlDevice_t d, unsigned* v) { return *v = Gpu(d).max_gen, kNvmlSuccess; }
nvmlReturn_t Width(nvmlDevice_t d, unsigned* v) { return *v = Gpu(d).width, kNvmlSuccess; }
nvmlReturn_t MaxWidth(nvmlDevice_t d, unsigned* v) { return *v = Gpu(d).max_width, kNvmlSuccess; }
nvmlReturn_t EccErrors(nvmlDevice_t d, int type, int counter, unsigned long long* n) {
  if (type != kNvmlMemoryErrorUncorrected) return kNvmlErrorInvalidArgument;
  *n = counter == kNvmlVolatileEcc ? Gpu(d).ecc_volatile : Gpu(d).ecc_aggregate;
  return kNvmlSuccess;
}
nvmlReturn_t Reasons(nvmlDevice_t d, unsigned long long* r) {
  return *r = Gpu(d).reasons, kNvmlSuccess;
}
nvmlReturn_t Temp(nvmlDevice_t d, int sensor, unsigned* t) {
  if (sensor != kNvmlTemperatureGpu) return kNvmlErrorInvalidArgument;
  return *t = Gpu(d).temp, kNvmlSuccess;
}
// The clock of `type` (kNvmlClockSm, kNvmlClockMem) from the two given.
nvmlReturn_t ClockOf(int type, int sm, int mem, unsigned* mhz) {
  int v = type == kNvmlClockSm ? sm : type == kNvmlClockMem ? mem : -2;
  if (v == -2) return kNvmlErrorInvalidArgument;
  if (v < 0) return kNvmlErrorNotSupported;
  return *mhz = static_cast<unsigned>(v), kNvmlSuccess;
}
nvmlReturn_t Clock(nvmlDevice_t d, int type, unsigned* mhz) {
  return ClockOf(type, Gpu(d).sm_mhz, Gpu(d).mem_mhz, mhz);
}
nvmlReturn_t MaxClock(nvmlDevice_t d, int type, unsigned* mhz) {
  // Only the SM maximum is asked for; a memory one would read as unknown.
  return ClockOf(type, Gpu(d).sm_max_mhz, -2, mhz);
}
nvmlReturn_t Power(nvmlDevice_t d, unsigned* mw) { return *mw = Gpu(d).power_mw, kNvmlSuccess; }
nvmlReturn_t Mig(nvmlDevice_t d, unsigned* cur, unsigned* pend) {
  return *cur = *pend = Gpu(d).mig, kNvmlSuccess;
}
nvmlReturn_t LinkErrors(nvmlDevice_t d, unsigned l, int counter, unsigned long long* v) {
  if (!Gpu(d).link_counters) return kNvmlErrorNotSupported;
  if (l >= Gpu(d).links) return kNvmlErrorInvalidArgument;
  // Distinct per counter, so a mix-up of the four names shows.
  return *v = Gpu(d).link_errors * (counter + 1), kNvmlSuccess;
}
nvmlReturn_t Fabric(nvmlDevice_t d, NvmlGpuFabricInfo* info) {
  if (Gpu(d).fabric_state < 0) return kNvmlErrorNotSupported;
  std::memset(info, 0, sizeof *info);
  info->state = static_cast<unsigned char>(Gpu(d).fabric_state);
  return kNvmlSuccess;
}

NvmlApi FakeApi() {
  NvmlApi a;
  a.init = a.shutdown = Ok;
  a.error_string = ErrStr;
  a.driver_version = Driver;
  a.device_count = Count;
  a.handle_by_index = Handle;
  a.name = Name;
  a.pci_info = Pci;
  a.ecc_mode = Ecc;
  a.retired_pages_pending = Retired;
  a.remapped_rows = Remapped;
  a.persistence_mode = Persist;
  a.nvlink_state = LinkState;
  a.pcie_gen = Gen;
  a.pcie_max_gen = MaxGen;
  a.pcie_width = Width;
  a.pcie_max_width = MaxWidth;
  a.total_ecc_errors = EccErrors;
  a.clock_event_reasons = Reasons;
  a.temperature = Temp;
  a.clock_info = Clock;
  a.max_clock_info = MaxClock;
  a.power_usage = Power;
  a.mig_mode = Mig;
  a.nvlink_error_counter = LinkErrors;
  a.fabric_info = Fabric;
  return a;
}

class HealthGpuFake : public ::testing::Test {
 protected:
  void SetUp() override { g_gpus = {FakeGpu{}}; }
};

TEST_F(HealthGpuFake, TheH200ReadsAsNvidiaSmiShowedIt) {
  json s = GpuHealthFromApi(FakeApi(), Sysroot(kGpuNode));
  EXPECT_EQ(s["status"], "ok");
  EXPECT_EQ(s["count"], 1);
  ASSERT_EQ(s["gpus"].size(), 1u);
  const json& g = s["gpus"][0];
  EXPECT_EQ(g["index"], 0);
  EXPECT_EQ(g["bus_id"], "0000:00:06.0");
  EXPECT_EQ(g["name"], "NVIDIA H200");
  EXPECT_TRUE(g["uuid"].is_null()) << "no nvmlDeviceGetUUID in this fake";
  json pcie = {{"gen", 5},
               {"max_gen", 5},
               {"width", 16},
               {"max_width", 16},
               {"sysfs",
                {{"width", 16},
                 {"max_width", 16},
                 {"speed", "32.0 GT/s PCIe"},
                 {"max_speed", "32.0 GT/s PCIe"}}}};
  EXPECT_EQ(g["pcie"], pcie);
  json ecc = {{"mode", "enabled"}, {"volatile_uncorrected", 0}, {"aggregate_uncorrected", 0}};
  EXPECT_EQ(g["ecc"], ecc);
  EXPECT_EQ(g["retired_pages_pending"], false);
  json remapped = {
      {"pending", false}, {"failure", false}, {"correctable", 0}, {"uncorrectable", 0}};
  EXPECT_EQ(g["remapped_rows"], remapped);
  EXPECT_EQ(g["clock_event_reasons"], 1);
  EXPECT_EQ(g["temperature_c"], 44);
  json clocks = {{"sm", 405}, {"mem", 3201}, {"sm_max", 1980}};
  EXPECT_EQ(g["clocks_mhz"], clocks);
  EXPECT_DOUBLE_EQ(g["power_w"].get<double>(), 121.05);
  EXPECT_EQ(g["persistence_mode"], "enabled");
  EXPECT_EQ(g["mig_mode"], "disabled");
  EXPECT_EQ(g["nvlinks"], json::array());
  EXPECT_EQ(g["fabric_state"], "not-supported") << "NVML answers NOT_SUPPORTED on a PCIe H200";
  EXPECT_TRUE(g["fabric_status"].is_null());
  EXPECT_EQ(s["topology"], json::array({json::array({"X"})}));
}

TEST_F(HealthGpuFake, ADegradedLinkAndEccErrorsShowOnTheirGpuOnly) {
  g_gpus = {FakeGpu{}, FakeGpu{}};
  g_gpus[1].bus = "00000000:18:00.0";
  g_gpus[1].gen = 4;
  g_gpus[1].width = 8;
  g_gpus[1].ecc_volatile = 2;
  g_gpus[1].ecc_aggregate = 7;
  g_gpus[1].reasons = 0x8;  // HW slowdown
  json s = GpuHealthFromApi(FakeApi(), Sysroot(kGpuNode));
  const json& bad = s["gpus"][1];
  EXPECT_EQ(bad["pcie"]["gen"], 4);
  EXPECT_EQ(bad["pcie"]["width"], 8);
  EXPECT_EQ(bad["pcie"]["max_width"], 16);
  EXPECT_TRUE(bad["pcie"]["sysfs"].is_null()) << "no /sys/bus/pci/devices/0000:18:00.0 there";
  EXPECT_EQ(bad["ecc"]["volatile_uncorrected"], 2);
  EXPECT_EQ(bad["ecc"]["aggregate_uncorrected"], 7);
  EXPECT_EQ(bad["clock_event_reasons"], 8);
  EXPECT_EQ(s["gpus"][0]["pcie"]["width"], 16);
  EXPECT_EQ(s["gpus"][0]["ecc"]["volatile_uncorrected"], 0);
}

TEST_F(HealthGpuFake, ClocksAreReadPerGpuAndNullWhereUnsupported) {
  g_gpus = {FakeGpu{}, FakeGpu{}, FakeGpu{}};
  g_gpus[1].sm_mhz = 1410;  // held back under load
  g_gpus[1].mem_mhz = 2619;
  g_gpus[2].mem_mhz = -1;
  g_gpus[2].sm_max_mhz = -1;
  json s = GpuHealthFromApi(FakeApi(), Sysroot(kGpuNode));
  ASSERT_EQ(s["gpus"].size(), 3u);
  json idle = {{"sm", 405}, {"mem", 3201}, {"sm_max", 1980}};
  json slow = {{"sm", 1410}, {"mem", 2619}, {"sm_max", 1980}};
  json partial = {{"sm", 405}, {"mem", nullptr}, {"sm_max", nullptr}};
  EXPECT_EQ(s["gpus"][0]["clocks_mhz"], idle);
  EXPECT_EQ(s["gpus"][1]["clocks_mhz"], slow);
  EXPECT_EQ(s["gpus"][2]["clocks_mhz"], partial) << "NOT_SUPPORTED is null, not 0";
}

TEST_F(HealthGpuFake, NvlinkErrorCountersAreReadPerLinkAndNullWhereUnsupported) {
  g_gpus = {FakeGpu{}, FakeGpu{}};
  g_gpus[0].links = g_gpus[1].links = 2;
  g_gpus[0].link_errors = 5;
  g_gpus[1].link_counters = false;
  json s = GpuHealthFromApi(FakeApi(), Sysroot(kGpuNode));
  const json& links = s["gpus"][0]["nvlinks"];
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[1]["link"], 1);
  EXPECT_EQ(links[1]["active"], true);
  json errors = {{"replay", 5}, {"recovery", 10}, {"crc_flit", 15}, {"crc_data", 20}};
  EXPECT_EQ(links[1]["errors"], errors);
  EXPECT_TRUE(s["gpus"][1]["nvlinks"][0]["errors"].is_null());
}

TEST_F(HealthGpuFake, FabricStateAndStatusAreNamed) {
  g_gpus[0].fabric_state = kNvmlFabricStateCompleted;
  json g = GpuHealthFromApi(FakeApi(), Sysroot(kGpuNode))["gpus"][0];
  EXPECT_EQ(g["fabric_state"], "completed");
  EXPECT_EQ(g["fabric_status"], "Success");
  EXPECT_EQ(FabricStateName(kNvmlFabricStateNotStarted), "not-started");
  EXPECT_EQ(FabricStateName(kNvmlFabricStateInProgress), "in-progress");
  EXPECT_TRUE(FabricStateName(9).is_null());
}

TEST_F(HealthGpuFake, MissingEntryPointsGiveNullFields) {
  NvmlApi a;
  a.init = a.shutdown = Ok;
  a.driver_version = Driver;
  a.device_count = Count;
  a.handle_by_index = Handle;
  json g = GpuHealthFromApi(a, Sysroot(kGpuNode))["gpus"][0];
  EXPECT_TRUE(g["bus_id"].is_null());
  EXPECT_TRUE(g["pcie"]["gen"].is_null());
  EXPECT_TRUE(g["pcie"]["max_width"].is_null());
  EXPECT_TRUE(g["pcie"]["sysfs"].is_null()) << "no bus id, no sysfs folder to read";
  EXPECT_TRUE(g["ecc"]["mode"].is_null());
  EXPECT_TRUE(g["ecc"]["volatile_uncorrected"].is_null());
  EXPECT_TRUE(g["retired_pages_pending"].is_null());
  EXPECT_TRUE(g["remapped_rows"].is_null());
  EXPECT_TRUE(g["clock_event_reasons"].is_null());
  EXPECT_TRUE(g["temperature_c"].is_null());
  json no_clocks = {{"sm", nullptr}, {"mem", nullptr}, {"sm_max", nullptr}};
  EXPECT_EQ(g["clocks_mhz"], no_clocks);
  EXPECT_TRUE(g["power_w"].is_null());
  EXPECT_TRUE(g["persistence_mode"].is_null());
  EXPECT_TRUE(g["mig_mode"].is_null());
  EXPECT_EQ(g["nvlinks"], json::array());
  EXPECT_TRUE(g["fabric_state"].is_null()) << "no nvmlDeviceGetGpuFabricInfo: unknown, not a state";
  EXPECT_TRUE(g["fabric_status"].is_null());
}

TEST(HealthGpu, SysfsLinkIsReadUnderTheSysroot) {
  json want = {{"width", 16},
               {"max_width", 16},
               {"speed", "32.0 GT/s PCIe"},
               {"max_speed", "32.0 GT/s PCIe"}};
  EXPECT_EQ(PcieSysfs(Sysroot(kGpuNode), "0000:00:06.0"), want);
  EXPECT_TRUE(PcieSysfs(Sysroot(kGpuNode), "0000:99:00.0").is_null());
}

TEST(HealthGpu, NoLibraryIsAbsentListingThePathsTried) {
  GpuProbeOptions o;
  o.nvml_candidates = {"/nonexistent/libnvidia-ml.so.1"};
  json s = CollectGpuHealth(o, Sysroot(kGpuNode));
  EXPECT_EQ(s["status"], "absent");
  ASSERT_EQ(s["searched"].size(), 1u);
  EXPECT_NE(s["searched"][0].get<std::string>().find("/nonexistent/"), std::string::npos);
}

}  // namespace
}  // namespace cc::agent
