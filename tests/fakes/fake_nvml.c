/* A fake libnvidia-ml.so.1: the NVML entry points the agent's "gpu" facts
 * and its health command use (agent/nvml_api.h), answering from the node's
 * values file (fake_values.h). Keys: tests/fakes/README.md. The health keys
 * may be given per GPU as `key.<index>` (`pcie_width.3 = 8`). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fake_values.h"

typedef int nvmlReturn_t;
enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
};
enum { kMaxGpus = 64, kNvSwitchBus = 0xc0 };

/* nvmlGpuFabricInfo_t, 28 bytes (agent/nvml_api.h asserts the same). */
typedef struct {
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
} nvmlGpuFabricInfo_t;

/* nvmlPciInfo_t, 68 bytes (agent/facts_gpu.h asserts the same). */
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct FakeGpu {
  unsigned index;
} * nvmlDevice_t;
static struct FakeGpu gpus[kMaxGpus];
static int initialized;

/* Bus numbers of an 8-GPU HGX board, then made-up ones. */
static unsigned BusOf(unsigned i) {
  static const unsigned kBus[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
  return i < 8 ? kBus[i] : 0x10 + i;
}
static unsigned Count(void) {
  long long n = FakeInt("gpu_count", 0);
  return n < 0 ? 0 : n > kMaxGpus ? kMaxGpus : (unsigned)n;
}
static int Valid(nvmlDevice_t d) { return initialized && d >= gpus && d < gpus + Count(); }
/* `key.<index>` when the values file has it, else `key`, else fallback:
 * one GPU of a node can be the degraded one. */
static long long GpuInt(const char* key, unsigned index, long long fallback) {
  char own[96];
  snprintf(own, sizeof own, "%s.%u", key, index);
  return FakeInt(own, FakeInt(key, fallback));
}
static nvmlReturn_t Copy(const char* key, const char* fallback, char* buf, unsigned len) {
  return FakeCopy(key, fallback, buf, len) == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
}

FAKE_API nvmlReturn_t nvmlInit_v2(void) {
  if (FakeLoadValues("libnvidia-ml.so.1", (const void*)nvmlInit_v2) != 0) {
    return NVML_ERROR_DRIVER_NOT_LOADED;
  }
  nvmlReturn_t r = (nvmlReturn_t)FakeInt("nvml_init", NVML_SUCCESS);
  initialized = r == NVML_SUCCESS;
  for (unsigned i = 0; i < kMaxGpus; ++i) gpus[i].index = i;
  return r;
}
FAKE_API nvmlReturn_t nvmlShutdown(void) {
  if (!initialized) return NVML_ERROR_UNINITIALIZED;
  initialized = 0;
  return NVML_SUCCESS;
}
FAKE_API const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    default:
      return "Unknown Error";
  }
}
FAKE_API nvmlReturn_t nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  return initialized ? Copy("driver_version", "550.54.15", buf, len) : NVML_ERROR_UNINITIALIZED;
}
FAKE_API nvmlReturn_t nvmlSystemGetNVMLVersion(char* buf, unsigned len) {
  return initialized ? Copy("nvml_version", "12.550.54.15", buf, len) : NVML_ERROR_UNINITIALIZED;
}
FAKE_API nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  if (!initialized) return NVML_ERROR_UNINITIALIZED;
  *count = Count();
  return NVML_SUCCESS;
}
FAKE_API nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* dev) {
  if (!initialized) return NVML_ERROR_UNINITIALIZED;
  if (i >= Count()) return NVML_ERROR_INVALID_ARGUMENT;
  *dev = &gpus[i];
  return NVML_SUCCESS;
}
FAKE_API nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* buf, unsigned len) {
  return Valid(d) ? Copy("gpu_name", "NVIDIA H100 80GB HBM3", buf, len)
                  : NVML_ERROR_INVALID_ARGUMENT;
}
FAKE_API nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* buf, unsigned len) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  const char* prefix = FakeValue("uuid_prefix");
  int n = snprintf(buf, len, "%s%02x", prefix ? prefix : "GPU-00000000-0000-0000-0000-0000000000",
                   d->index);
  return n >= 0 && (unsigned)n < len ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
}
static void FillPci(nvmlPciInfo_t* p, unsigned bus) {
  memset(p, 0, sizeof *p);
  p->bus = bus;
  snprintf(p->busId, sizeof p->busId, "00000000:%02X:00.0", bus);
  snprintf(p->busIdLegacy, sizeof p->busIdLegacy, "0000:%02X:00.0", bus);
  p->pciDeviceId = 0x233010de;
}
FAKE_API nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  FillPci(p, BusOf(d->index));
  return NVML_SUCCESS;
}
FAKE_API nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  m->total = (unsigned long long)FakeInt("memory_bytes", 85520809984LL);
  m->used = 0;
  m->free = m->total;
  return NVML_SUCCESS;
}
FAKE_API nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char* buf, unsigned len) {
  return Valid(d) ? Copy("vbios", "96.00.89.00.01", buf, len) : NVML_ERROR_INVALID_ARGUMENT;
}
FAKE_API nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int* current, int* pending) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  *current = *pending = (int)FakeInt("ecc", 1);
  return NVML_SUCCESS;
}
FAKE_API nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int* pending) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  *pending = (int)GpuInt("retired_pending", d->index, 0);
  return NVML_SUCCESS;
}
FAKE_API nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned* corr, unsigned* unc,
                                                unsigned* pending, unsigned* failure) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  *corr = *unc = 0;
  *pending = (unsigned)GpuInt("remapped_pending", d->index, 0);
  *failure = (unsigned)GpuInt("remapped_failure", d->index, 0);
  return NVML_SUCCESS;
}
FAKE_API nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int* mode) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  *mode = (int)FakeInt("persistence", 1);
  return NVML_SUCCESS;
}
/* `nvlinks` active links per GPU, all to NVSwitches (an HGX board); 0 (the
 * default): NVLink not supported, as on a PCIe card. */
FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int* active) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  long long n = FakeInt("nvlinks", 0);
  if (n <= 0) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= (unsigned long long)n) return NVML_ERROR_INVALID_ARGUMENT;
  *active = 1;
  return NVML_SUCCESS;
}
FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned link,
                                                          nvmlPciInfo_t* p) {
  if (!Valid(d) || link >= (unsigned long long)FakeInt("nvlinks", 0)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  FillPci(p, kNvSwitchBus + link % 4);
  return NVML_SUCCESS;
}
/* The first half of the GPUs on one CPU socket (NODE), the rest on the
 * other (SYS). */
FAKE_API nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                          int* level) {
  if (!Valid(a) || !Valid(b)) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned half = (Count() + 1) / 2;
  *level = (a->index < half) == (b->index < half) ? 40 : 50;
  return NVML_SUCCESS;
}

/* Health: the PCIe link as trained and its maximum (an H100/H200 SXM: gen 5
 * x16). `pcie_width.3 = 8` degrades GPU 3 alone. */
static nvmlReturn_t GpuUnsigned(nvmlDevice_t d, const char* key, long long fallback, unsigned* v) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  *v = (unsigned)GpuInt(key, d->index, fallback);
  return NVML_SUCCESS;
}
FAKE_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned* v) {
  return GpuUnsigned(d, "pcie_gen", 5, v);
}
FAKE_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned* v) {
  return GpuUnsigned(d, "pcie_max_gen", 5, v);
}
FAKE_API nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned* v) {
  return GpuUnsigned(d, "pcie_width", 16, v);
}
FAKE_API nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned* v) {
  return GpuUnsigned(d, "pcie_max_width", 16, v);
}
/* Uncorrected errors (type 1) from the values file; corrected ones 0. */
FAKE_API nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int error_type, int counter_type,
                                                  unsigned long long* count) {
  if (!Valid(d) || error_type < 0 || error_type > 1 || counter_type < 0 || counter_type > 1) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const char* key = counter_type == 0 ? "ecc_volatile_uncorrected" : "ecc_aggregate_uncorrected";
  *count = error_type == 1 ? (unsigned long long)GpuInt(key, d->index, 0) : 0;
  return NVML_SUCCESS;
}
/* 1 = nvmlClocksEventReasonGpuIdle, what an idle healthy GPU reports. */
FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d,
                                                             unsigned long long* reasons) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  *reasons = (unsigned long long)GpuInt("clock_event_reasons", d->index, 1);
  return NVML_SUCCESS;
}
FAKE_API nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
                                                                unsigned long long* reasons) {
  return nvmlDeviceGetCurrentClocksEventReasons(d, reasons);
}
FAKE_API nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned* t) {
  if (sensor != 0) return NVML_ERROR_INVALID_ARGUMENT; /* NVML_TEMPERATURE_GPU only */
  return GpuUnsigned(d, "temperature_c", 40, t);
}
/* Clocks in MHz (an H100 SXM under load: SM 1980 of 1980, memory 2619);
 * a negative value answers NOT_SUPPORTED. `clock_sm_mhz.3 = 1410` slows
 * GPU 3 alone. */
static nvmlReturn_t GpuClock(nvmlDevice_t d, const char* key, long long fallback, unsigned* mhz) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  long long v = GpuInt(key, d->index, fallback);
  if (v < 0) return NVML_ERROR_NOT_SUPPORTED;
  *mhz = (unsigned)v;
  return NVML_SUCCESS;
}
/* NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2; graphics (0) and video (3) are
 * not faked. */
FAKE_API nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  if (type == 1) return GpuClock(d, "clock_sm_mhz", 1980, mhz);
  if (type == 2) return GpuClock(d, "clock_mem_mhz", 2619, mhz);
  return NVML_ERROR_INVALID_ARGUMENT;
}
FAKE_API nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned* mhz) {
  if (type == 1) return GpuClock(d, "clock_sm_max_mhz", 1980, mhz);
  return NVML_ERROR_INVALID_ARGUMENT;
}
FAKE_API nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) {
  return GpuUnsigned(d, "power_mw", 100000, mw);
}
FAKE_API nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* current, unsigned* pending) {
  nvmlReturn_t r = GpuUnsigned(d, "mig_mode", 0, current);
  if (r == NVML_SUCCESS) *pending = *current;
  return r;
}
/* Every counter (replay, recovery, CRC flit, CRC data) of every link reads
 * `nvlink_errors`; links as nvmlDeviceGetNvLinkState has them. */
FAKE_API nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned link, int counter,
                                                      unsigned long long* value) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  long long n = FakeInt("nvlinks", 0);
  if (n <= 0) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= (unsigned long long)n || counter < 0 || counter > 3) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  *value = (unsigned long long)GpuInt("nvlink_errors", d->index, 0);
  return NVML_SUCCESS;
}
/* Not part of an NVLink fabric (NOT_SUPPORTED, as on a PCIe card) unless
 * `fabric_state` is set: then that state (3 = completed) with status 0. */
FAKE_API nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t* info) {
  if (!Valid(d)) return NVML_ERROR_INVALID_ARGUMENT;
  long long state = GpuInt("fabric_state", d->index, -1);
  if (state < 0) return NVML_ERROR_NOT_SUPPORTED;
  memset(info, 0, sizeof *info);
  info->state = (unsigned char)state;
  info->status = NVML_SUCCESS;
  return NVML_SUCCESS;
}
