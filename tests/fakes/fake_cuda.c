/* A fake libcuda.so.1: cuInit and cuDriverGetVersion as the agent's "cuda"
 * facts call them, from the node's values file (fake_values.h). Keys:
 * cuda_driver_version ("12.4" or 12040), cuda_init (the CUresult cuInit
 * returns, default 0). */
#include <stdlib.h>
#include <string.h>

#include "fake_values.h"

enum {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_UNKNOWN = 999
};

/* "12.4" -> 12040, "12040" -> 12040, -1 when unreadable. */
static int DriverVersion(void) {
  const char* v = FakeValue("cuda_driver_version");
  if (v == NULL) return -1;
  char* end = NULL;
  long major = strtol(v, &end, 10);
  if (*end == '\0') return (int)major;
  if (*end != '.') return -1;
  long minor = strtol(end + 1, &end, 10);
  return *end == '\0' ? (int)(major * 1000 + minor * 10) : -1;
}

FAKE_API int cuDriverGetVersion(int* version) {
  if (FakeLoadValues("libcuda.so.1", (const void*)cuDriverGetVersion) != 0) {
    return CUDA_ERROR_UNKNOWN;
  }
  int v = DriverVersion();
  if (v < 0) return CUDA_ERROR_UNKNOWN;
  *version = v;
  return CUDA_SUCCESS;
}
FAKE_API int cuInit(unsigned flags) {
  if (FakeLoadValues("libcuda.so.1", (const void*)cuInit) != 0) return CUDA_ERROR_NO_DEVICE;
  return (int)FakeInt("cuda_init", CUDA_SUCCESS);
}
FAKE_API int cuGetErrorName(int r, const char** name) {
  switch (r) {
    case CUDA_SUCCESS:
      *name = "CUDA_SUCCESS";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_INITIALIZED:
      *name = "CUDA_ERROR_NOT_INITIALIZED";
      return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE:
      *name = "CUDA_ERROR_NO_DEVICE";
      return CUDA_SUCCESS;
    case 803:
      *name = "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
      return CUDA_SUCCESS;
    case 804:
      *name = "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
      return CUDA_SUCCESS;
    case CUDA_ERROR_UNKNOWN:
      *name = "CUDA_ERROR_UNKNOWN";
      return CUDA_SUCCESS;
    default:
      *name = NULL;
      return 1; /* CUDA_ERROR_INVALID_VALUE */
  }
}
