#include "common/self_usage.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace cc {
namespace {

std::mutex segments_mu;
std::vector<std::pair<std::string, long>>& Segments() {
  static std::vector<std::pair<std::string, long>> s;
  return s;
}

bool Asked() {
  const char* path = std::getenv("CLUSTERCHECK_SELF_USAGE");
  return path != nullptr && *path != '\0';
}

// VmHWM of /proc/self/status in kB: unlike ru_maxrss, it follows a reset.
long ReadVmHwmKb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  long kb = 0;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::strtol(line + 6, nullptr, 10);
  }
  std::fclose(f);
  return kb;
}

}  // namespace

void EndSelfUsageSegment(const std::string& name) {
  if (!Asked()) return;
  std::lock_guard<std::mutex> lock(segments_mu);
  Segments().emplace_back(name, ReadVmHwmKb());
  if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

SelfUsage ReadSelfUsage() {
  rusage ru{};
  SelfUsage u;
  {
    std::lock_guard<std::mutex> lock(segments_mu);
    u.segment_peak_kb = Segments();
  }
  if (getrusage(RUSAGE_SELF, &ru) != 0) return u;
  // After a reset ru_maxrss is the current segment's; the run's peak is the
  // largest of all.
  u.max_rss_kb = ru.ru_maxrss;
  for (auto& [name, kb] : u.segment_peak_kb) u.max_rss_kb = std::max(u.max_rss_kb, kb);
  u.user_s = static_cast<double>(ru.ru_utime.tv_sec) + ru.ru_utime.tv_usec / 1e6;
  u.sys_s = static_cast<double>(ru.ru_stime.tv_sec) + ru.ru_stime.tv_usec / 1e6;
  return u;
}

std::string FormatSelfUsage(const SelfUsage& u) {
  char line[128];
  std::snprintf(line, sizeof line, "max_rss_kb=%ld user_s=%.2f sys_s=%.2f", u.max_rss_kb, u.user_s,
                u.sys_s);
  std::string out = line;
  for (auto& [name, kb] : u.segment_peak_kb) {
    out += " peak_kb." + name + "=" + std::to_string(kb);
  }
  return out + "\n";
}

void WriteSelfUsageIfAsked() {
  if (!Asked()) return;
  EndSelfUsageSegment("end");  // what came after the last stage: the summary
  const char* path = std::getenv("CLUSTERCHECK_SELF_USAGE");
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return;
  std::fputs(FormatSelfUsage(ReadSelfUsage()).c_str(), f);
  std::fclose(f);
}

}  // namespace cc
