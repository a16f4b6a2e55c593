#include "common/self_usage.h"

#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>

namespace cc {

SelfUsage ReadSelfUsage() {
  rusage ru{};
  SelfUsage u;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return u;
  u.max_rss_kb = ru.ru_maxrss;
  u.user_s = static_cast<double>(ru.ru_utime.tv_sec) + ru.ru_utime.tv_usec / 1e6;
  u.sys_s = static_cast<double>(ru.ru_stime.tv_sec) + ru.ru_stime.tv_usec / 1e6;
  return u;
}

std::string FormatSelfUsage(const SelfUsage& u) {
  char line[128];
  std::snprintf(line, sizeof line, "max_rss_kb=%ld user_s=%.2f sys_s=%.2f\n", u.max_rss_kb,
                u.user_s, u.sys_s);
  return line;
}

void WriteSelfUsageIfAsked() {
  const char* path = std::getenv("CLUSTERCHECK_SELF_USAGE");
  if (path == nullptr || *path == '\0') return;
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return;
  std::fputs(FormatSelfUsage(ReadSelfUsage()).c_str(), f);
  std::fclose(f);
}

}  // namespace cc
