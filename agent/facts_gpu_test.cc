#include "agent/facts_gpu.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace cc::agent {
namespace {

using nlohmann::json;

// A fake NVML: GPUs 0 and 1 joined by two direct NVLinks, GPU 2 without
// NVLink; all on one socket's host bridge. Handles are small integers.
struct FakeGpu {
  const char* name;
  const char* bus;  // as NVML writes it
  unsigned bus_no;
  std::vector<int> remote;  // per link: index of the far GPU, -1 switch
};
std::vector<FakeGpu> g_gpus;
nvmlReturn_t g_init = kNvmlSuccess;
int g_shutdowns = 0;
int g_bad_handle = -1;

unsigned Idx(nvmlDevice_t d) { return static_cast<unsigned>(reinterpret_cast<uintptr_t>(d)) - 1; }

nvmlReturn_t Init() { return g_init; }
nvmlReturn_t Shutdown() { return ++g_shutdowns, kNvmlSuccess; }
const char* ErrStr(nvmlReturn_t r) { return r == 9 ? "Driver Not Loaded" : "Unknown Error"; }
nvmlReturn_t Str(char* buf, unsigned len, const char* s) {
  if (std::strlen(s) + 1 > len) return 7;  // INSUFFICIENT_SIZE
  std::strcpy(buf, s);
  return kNvmlSuccess;
}
nvmlReturn_t Driver(char* b, unsigned n) { return Str(b, n, "550.54.15"); }
nvmlReturn_t NvmlVer(char* b, unsigned n) { return Str(b, n, "12.550.54.15"); }
nvmlReturn_t Count(unsigned* c) { return *c = static_cast<unsigned>(g_gpus.size()), kNvmlSuccess; }
nvmlReturn_t Handle(unsigned i, nvmlDevice_t* d) {
  if (static_cast<int>(i) == g_bad_handle) return 15;  // GPU_IS_LOST
  *d = reinterpret_cast<nvmlDevice_t>(static_cast<uintptr_t>(i + 1));
  return kNvmlSuccess;
}
nvmlReturn_t Name(nvmlDevice_t d, char* b, unsigned n) { return Str(b, n, g_gpus[Idx(d)].name); }
nvmlReturn_t Uuid(nvmlDevice_t d, char* b, unsigned n) {
  return Str(b, n, ("GPU-" + std::to_string(Idx(d))).c_str());
}
void FillPci(NvmlPciInfo* p, const FakeGpu& g) {
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->busId, g.bus);
  p->bus = g.bus_no;
}
nvmlReturn_t Pci(nvmlDevice_t d, NvmlPciInfo* p) {
  return FillPci(p, g_gpus[Idx(d)]), kNvmlSuccess;
}
nvmlReturn_t Mem(nvmlDevice_t, NvmlMemory* m) {
  m->total = 150ULL << 30;
  return kNvmlSuccess;
}
nvmlReturn_t Vbios(nvmlDevice_t, char* b, unsigned n) { return Str(b, n, "96.00.AF.00.01"); }
nvmlReturn_t Ecc(nvmlDevice_t d, int* cur, int* pend) {
  if (Idx(d) == 2) return kNvmlErrorNotSupported;
  *cur = 1, *pend = 1;
  return kNvmlSuccess;
}
nvmlReturn_t Retired(nvmlDevice_t, int* p) { return *p = 0, kNvmlSuccess; }
nvmlReturn_t Remapped(nvmlDevice_t d, unsigned* c, unsigned* u, unsigned* p, unsigned* f) {
  *c = 0, *u = Idx(d) == 1 ? 2 : 0, *p = Idx(d) == 1, *f = 0;
  return kNvmlSuccess;
}
nvmlReturn_t Persist(nvmlDevice_t, int* m) { return *m = 1, kNvmlSuccess; }
nvmlReturn_t LinkState(nvmlDevice_t d, unsigned l, int* active) {
  const FakeGpu& g = g_gpus[Idx(d)];
  if (g.remote.empty()) return kNvmlErrorNotSupported;
  if (l >= g.remote.size()) return kNvmlErrorInvalidArgument;
  *active = 1;
  return kNvmlSuccess;
}
nvmlReturn_t LinkRemote(nvmlDevice_t d, unsigned l, NvmlPciInfo* p) {
  int r = g_gpus[Idx(d)].remote[l];
  if (r < 0) {
    std::memset(p, 0, sizeof *p);
    std::strcpy(p->busId, "00000000:C0:00.0");  // an NVSwitch
    return kNvmlSuccess;
  }
  return FillPci(p, g_gpus[static_cast<size_t>(r)]), kNvmlSuccess;
}
nvmlReturn_t Ancestor(nvmlDevice_t, nvmlDevice_t, int* level) { return *level = 30, kNvmlSuccess; }

NvmlApi FakeApi() {
  NvmlApi a;
  a.init = Init;
  a.shutdown = Shutdown;
  a.error_string = ErrStr;
  a.driver_version = Driver;
  a.nvml_version = NvmlVer;
  a.device_count = Count;
  a.handle_by_index = Handle;
  a.name = Name;
  a.uuid = Uuid;
  a.pci_info = Pci;
  a.memory_info = Mem;
  a.vbios_version = Vbios;
  a.ecc_mode = Ecc;
  a.retired_pages_pending = Retired;
  a.remapped_rows = Remapped;
  a.persistence_mode = Persist;
  a.nvlink_state = LinkState;
  a.nvlink_remote_pci = LinkRemote;
  a.common_ancestor = Ancestor;
  return a;
}

class FactsGpuFake : public ::testing::Test {
 protected:
  void SetUp() override {
    g_init = kNvmlSuccess;
    g_shutdowns = 0;
    g_bad_handle = -1;
    g_gpus = {{"NVIDIA H200", "00000000:18:00.0", 0x18, {1, 1}},
              {"NVIDIA H200", "00000000:2A:00.0", 0x2a, {0, 0}},
              {"NVIDIA H100 80GB HBM3", "00000000:3A:00.0", 0x3a, {}}};
  }
};

TEST_F(FactsGpuFake, ReportsEveryGpuAndShutsNvmlDown) {
  json g = GpuFactsFromApi(FakeApi());
  EXPECT_EQ(g["status"], "ok");
  EXPECT_EQ(g["driver_version"], "550.54.15");
  EXPECT_EQ(g["nvml_version"], "12.550.54.15");
  EXPECT_EQ(g["count"], 3);
  ASSERT_EQ(g["gpus"].size(), 3u);
  const json& g0 = g["gpus"][0];
  EXPECT_EQ(g0["name"], "NVIDIA H200");
  EXPECT_EQ(g0["uuid"], "GPU-0");
  EXPECT_EQ(g0["pci_bus_id"], "0000:18:00.0");
  EXPECT_EQ(g0["memory_bytes"], 150ULL << 30);
  EXPECT_EQ(g0["vbios"], "96.00.AF.00.01");
  EXPECT_EQ(g0["ecc_mode"], "enabled");
  EXPECT_EQ(g0["retired_pages_pending"], false);
  EXPECT_EQ(g0["remapped_rows_pending"], false);
  EXPECT_EQ(g0["persistence_mode"], "enabled");
  EXPECT_EQ(g0["nvlinks"].size(), 2u);
  EXPECT_EQ(g["gpus"][1]["remapped_rows_pending"], true);
  EXPECT_EQ(g["gpus"][2]["ecc_mode"], "unsupported");
  EXPECT_TRUE(g["gpus"][2]["nvlinks"].empty());
  EXPECT_EQ(g_shutdowns, 1);
}

TEST_F(FactsGpuFake, TopologyCountsDirectLinksAndFallsBackToPcie) {
  json g = GpuFactsFromApi(FakeApi());
  json want = {{"X", "NV2", "PHB"}, {"NV2", "X", "PHB"}, {"PHB", "PHB", "X"}};
  EXPECT_EQ(g["topology"], want);
}

TEST_F(FactsGpuFake, GpusBehindNvSwitchesShowTheirLinkCount) {
  std::vector<int> eighteen(18, -1);
  g_gpus = {{"NVIDIA H200", "00000000:18:00.0", 0x18, eighteen},
            {"NVIDIA H200", "00000000:2A:00.0", 0x2a, eighteen}};
  json g = GpuFactsFromApi(FakeApi());
  json want = json::array({json::array({"X", "NV18"}), json::array({"NV18", "X"})});
  EXPECT_EQ(g["topology"], want);
}

TEST_F(FactsGpuFake, ALostGpuIsAnErrorButTheOthersAreReported) {
  g_bad_handle = 1;
  json g = GpuFactsFromApi(FakeApi());
  EXPECT_EQ(g["status"], "error");
  EXPECT_NE(g["reason"].get<std::string>().find("GPU 1"), std::string::npos);
  EXPECT_EQ(g["gpus"][0]["name"], "NVIDIA H200");
  EXPECT_TRUE(g["gpus"][1].contains("error"));
  EXPECT_EQ(g["topology"][1][1], "X");
  EXPECT_EQ(g["topology"][0][1], "?");
}

TEST_F(FactsGpuFake, DriverNotLoadedIsAbsentWithTheReason) {
  g_init = kNvmlErrorDriverNotLoaded;
  json g = GpuFactsFromApi(FakeApi());
  EXPECT_EQ(g["status"], "absent");
  EXPECT_NE(g["reason"].get<std::string>().find("Driver Not Loaded"), std::string::npos);
  EXPECT_EQ(g_shutdowns, 0);
}

TEST_F(FactsGpuFake, MissingOptionalEntryPointsGiveNullFields) {
  NvmlApi a = FakeApi();
  a.vbios_version = nullptr;
  a.ecc_mode = nullptr;
  a.nvlink_state = nullptr;
  a.common_ancestor = nullptr;
  a.error_string = nullptr;
  json g = GpuFactsFromApi(a);
  EXPECT_EQ(g["status"], "ok");
  EXPECT_TRUE(g["gpus"][0]["vbios"].is_null());
  EXPECT_EQ(g["gpus"][0]["ecc_mode"], "unsupported");
  EXPECT_TRUE(g["gpus"][0]["nvlinks"].empty());
  EXPECT_EQ(g["topology"][0][2], "?");
}

TEST(FactsGpu, BusIdsAreNormalized) {
  EXPECT_EQ(NormalizeBusId("00000000:2A:00.0"), "0000:2a:00.0");
  EXPECT_EQ(NormalizeBusId("0000:2a:00.0"), "0000:2a:00.0");
  EXPECT_EQ(NormalizeBusId("00000001:2A:00.0"), "0001:2a:00.0");
}

TEST(FactsGpu, TopologyLabelsAreNvidiaSmis) {
  EXPECT_EQ(TopologyLevelLabel(10), "PIX");
  EXPECT_EQ(TopologyLevelLabel(20), "PXB");
  EXPECT_EQ(TopologyLevelLabel(30), "PHB");
  EXPECT_EQ(TopologyLevelLabel(40), "NODE");
  EXPECT_EQ(TopologyLevelLabel(50), "SYS");
  EXPECT_EQ(TopologyLevelLabel(-1), "?");
}

TEST(FactsGpu, LinksWithoutAKnownFarEndAreNvlink) {
  std::vector<GpuLinks> links = {
      {"0000:18:00.0", {"", ""}}, {"0000:2a:00.0", {""}}, {"0000:3a:00.0", {}}};
  std::vector<std::vector<int>> levels(3, std::vector<int>(3, 50));
  auto m = TopologyMatrix(levels, links);
  EXPECT_EQ(m[0][1], "NVLINK");
  EXPECT_EQ(m[0][2], "SYS");
}

TEST(FactsGpu, CudaVersionString) {
  EXPECT_EQ(CudaVersionString(13000), "13.0");
  EXPECT_EQ(CudaVersionString(12040), "12.4");
  EXPECT_EQ(CudaVersionString(11080), "11.8");
}

int FakeCuInitNoDevice(unsigned) { return 100; }
int FakeCuInitOk(unsigned) { return 0; }
int FakeCuVersion(int* v) { return *v = 12040, 0; }
int FakeCuErrName(int, const char** s) { return *s = "CUDA_ERROR_NO_DEVICE", 0; }

TEST(FactsGpu, CudaWithoutDevicesKeepsTheVersionAndSaysWhy) {
  CudaApi a;
  a.init = FakeCuInitNoDevice;
  a.driver_get_version = FakeCuVersion;
  a.get_error_name = FakeCuErrName;
  json c = CudaFactsFromApi(a);
  EXPECT_EQ(c["status"], "absent");
  EXPECT_EQ(c["driver_api_version"], "12.4");
  EXPECT_NE(c["reason"].get<std::string>().find("CUDA_ERROR_NO_DEVICE"), std::string::npos);
  a.init = FakeCuInitOk;
  EXPECT_EQ(CudaFactsFromApi(a)["status"], "ok");
}

TEST(FactsGpu, MissingLibrariesAreAbsentListingThePathsTried) {
  GpuProbeOptions o;
  o.nvml_candidates = {"/nonexistent/libnvidia-ml.so.1", "libclustercheck-no-nvml.so.1"};
  o.cuda_candidates = {"/nonexistent/libcuda.so.1"};
  json g = CollectGpuFacts(o);
  EXPECT_EQ(g["status"], "absent");
  ASSERT_EQ(g["searched"].size(), 2u);
  EXPECT_NE(g["searched"][1].get<std::string>().find("libclustercheck-no-nvml.so.1"),
            std::string::npos);
  json c = CollectCudaFacts(o);
  EXPECT_EQ(c["status"], "absent");
  EXPECT_EQ(c["searched"].size(), 1u);
}

TEST(FactsGpu, ALibraryWithoutNvmlSymbolsIsAnError) {
  GpuProbeOptions o;
  o.nvml_candidates = {"libm.so.6"};
  json g = CollectGpuFacts(o);
  EXPECT_EQ(g["status"], "error");
  EXPECT_NE(g["reason"].get<std::string>().find("nvmlInit_v2"), std::string::npos);
}

TEST(FactsGpu, DefaultSearchOnThisMachineIsACleanFinding) {
  json g = CollectGpuFacts({});
  EXPECT_TRUE(g["status"] == "ok" || g["status"] == "absent" || g["status"] == "error");
  EXPECT_FALSE(g["searched"].empty());
  json c = CollectCudaFacts({});
  EXPECT_FALSE(c["searched"].empty());
}

}  // namespace
}  // namespace cc::agent
