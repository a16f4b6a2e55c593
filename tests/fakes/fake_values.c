#define _GNU_SOURCE
#include "fake_values.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxValues = 64, kKeyLen = 64, kValueLen = 256 };

static struct {
  char key[kKeyLen];
  char value[kValueLen];
} values[kMaxValues];
static int value_count;

static char* Trim(char* s) {
  while (*s == ' ' || *s == '\t') ++s;
  char* e = s + strlen(s);
  while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r')) *--e = '\0';
  return s;
}

/* The values file next to the library as the loader named it: dlopen of
 * "/run/node3/lib/libcuda.so.1" keeps that name even when it is a symlink,
 * so a per-node folder of symlinks finds its own file. */
static void PathNextToLibrary(const void* anchor, char* out, size_t len) {
  Dl_info info;
  out[0] = '\0';
  if (dladdr(anchor, &info) == 0 || info.dli_fname == NULL) return;
  const char* slash = strrchr(info.dli_fname, '/');
  if (slash == NULL) return;
  snprintf(out, len, "%.*s/fake_gpu.conf", (int)(slash - info.dli_fname), info.dli_fname);
}

int FakeLoadValues(const char* who, const void* anchor) {
  char path[4096];
  const char* env = getenv("CC_FAKE_GPU_CONF");
  if (env != NULL && env[0] != '\0') {
    snprintf(path, sizeof path, "%s", env);
  } else {
    PathNextToLibrary(anchor, path, sizeof path);
  }
  FILE* f = path[0] ? fopen(path, "r") : NULL;
  if (f == NULL) {
    fprintf(stderr, "%s (clustercheck test fake): no values file (%s)\n", who,
            path[0] ? path : "CC_FAKE_GPU_CONF unset and no folder to look in");
    return -1;
  }
  value_count = 0;
  char line[1024];
  while (fgets(line, sizeof line, f) != NULL && value_count < kMaxValues) {
    char* hash = strchr(line, '#');
    if (hash != NULL) *hash = '\0';
    char* eq = strchr(line, '=');
    if (eq == NULL) continue;
    *eq = '\0';
    snprintf(values[value_count].key, kKeyLen, "%s", Trim(line));
    snprintf(values[value_count].value, kValueLen, "%s", Trim(eq + 1));
    ++value_count;
  }
  fclose(f);
  return 0;
}

const char* FakeValue(const char* key) {
  for (int i = value_count - 1; i >= 0; --i) { /* the last one wins */
    if (strcmp(values[i].key, key) == 0) return values[i].value;
  }
  return NULL;
}

long long FakeInt(const char* key, long long fallback) {
  const char* v = FakeValue(key);
  if (v == NULL || v[0] == '\0') return fallback;
  char* end = NULL;
  long long x = strtoll(v, &end, 0);
  return *end == '\0' ? x : fallback;
}

int FakeCopy(const char* key, const char* fallback, char* buf, unsigned len) {
  const char* v = FakeValue(key);
  if (v == NULL) v = fallback;
  if (strlen(v) + 1 > len) return -1;
  memcpy(buf, v, strlen(v) + 1);
  return 0;
}
