// The "system" section of the facts: hostname, OS, kernel, glibc, CPU,
// memory, /dev/shm and the locked-memory limit (RDMA registers memory, so a
// small memlock limit breaks NCCL over IB).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "agent/sysroot.h"

namespace cc::agent {

struct CpuSummary {
  std::string model;
  int sockets = 0;
  int cores = 0;    // physical cores over all sockets
  int threads = 0;  // logical CPUs
};

// /etc/os-release: KEY=value lines, values optionally quoted.
std::map<std::string, std::string> ParseOsRelease(const std::string& text);
// /proc/cpuinfo (x86 and, with fewer fields, arm64).
CpuSummary ParseCpuInfo(const std::string& text);
// MemTotal from /proc/meminfo in bytes.
std::optional<long long> ParseMemTotalBytes(const std::string& meminfo);
// The soft "Max locked memory" from /proc/<pid>/limits: "unlimited" or a
// byte count; null when the line is missing.
nlohmann::json ParseMemlockFromLimits(const std::string& limits);

// The whole section. Never throws for missing files: a missing value is
// null with a "<field>_reason" beside it.
nlohmann::json CollectSystemFacts(const Sysroot& root);

}  // namespace cc::agent
