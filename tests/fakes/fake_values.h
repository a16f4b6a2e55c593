/* The values file the fake GPU libraries (and fake_python.sh) report from,
 * so that each simulated node can be a different machine while all of them
 * share one filesystem.
 *
 * Where it is: $CC_FAKE_GPU_CONF when set (the inventory's per-node `env`),
 * else fake_gpu.conf in the folder the library was loaded from, as the
 * loader names it (a per-node folder of symlinks in `library_paths`).
 *
 * Format: "key = value" lines, '#' starts a comment. Keys are listed in
 * tests/fakes/README.md. */
#ifndef CC_TESTS_FAKES_FAKE_VALUES_H_
#define CC_TESTS_FAKES_FAKE_VALUES_H_

#define FAKE_API __attribute__((visibility("default")))

/* Reads the values file (again on every call: tests rewrite it). `anchor`
 * is any function of the calling library, for dladdr. Returns 0 when the
 * file was read, -1 (with a line on stderr naming `who` and the path) when
 * not. */
int FakeLoadValues(const char* who, const void* anchor);
/* The value of `key` from the last successful FakeLoadValues, or NULL. */
const char* FakeValue(const char* key);
/* FakeValue as an integer, `fallback` when absent or not a number. */
long long FakeInt(const char* key, long long fallback);
/* Copies FakeValue(key) (or `fallback`) into buf of `len` bytes; returns
 * 0, or -1 when it does not fit (NVML's INSUFFICIENT_SIZE case). */
int FakeCopy(const char* key, const char* fallback, char* buf, unsigned len);

#endif
