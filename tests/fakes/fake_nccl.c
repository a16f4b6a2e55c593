/* A fake libnccl.so.2: ncclGetVersion from the node's values file
 * (fake_values.h), key nccl_version ("2.21.5"; NCCL's code is
 * major*10000 + minor*100 + patch since 2.9). */
#include <stdio.h>

#include "fake_values.h"

enum { ncclSuccess = 0, ncclSystemError = 2, ncclInvalidArgument = 4 };

FAKE_API int ncclGetVersion(int* version) {
  if (version == NULL) return ncclInvalidArgument;
  if (FakeLoadValues("libnccl.so.2", (const void*)ncclGetVersion) != 0) return ncclSystemError;
  const char* v = FakeValue("nccl_version");
  int major = 0, minor = 0, patch = 0;
  if (v == NULL || sscanf(v, "%d.%d.%d", &major, &minor, &patch) != 3) return ncclSystemError;
  *version = major * 10000 + minor * 100 + patch;
  return ncclSuccess;
}
FAKE_API const char* ncclGetErrorString(int r) {
  return r == ncclSuccess       ? "no error"
         : r == ncclSystemError ? "unhandled system error"
                                : "invalid argument";
}
