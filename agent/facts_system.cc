#include "agent/facts_system.h"

#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <set>
#include <sstream>

#include "agent/facts_software.h"

namespace cc::agent {

using nlohmann::json;

namespace {

// "key : value" -> (key, value), both trimmed.
bool SplitColon(const std::string& line, std::string* key, std::string* value) {
  size_t c = line.find(':');
  if (c == std::string::npos) return false;
  *key = Trim(line.substr(0, c));
  *value = Trim(line.substr(c + 1));
  return true;
}

std::string Unquote(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) ++i;
    out.push_back(v[i]);
  }
  return out;
}

json OsFacts(const Sysroot& root) {
  auto text = root.Read("/etc/os-release");
  if (!text.ok()) text = root.Read("/usr/lib/os-release");
  if (!text.ok()) {
    return {{"id", nullptr},
            {"version_id", nullptr},
            {"pretty_name", nullptr},
            {"reason", text.status().message()}};
  }
  auto kv = ParseOsRelease(*text);
  auto get = [&kv](const char* k) -> json {
    auto it = kv.find(k);
    return it == kv.end() ? json(nullptr) : json(it->second);
  };
  return {
      {"id", get("ID")}, {"version_id", get("VERSION_ID")}, {"pretty_name", get("PRETTY_NAME")}};
}

std::string Hostname(const Sysroot& root) {
  if (auto h = root.ReadLine("/proc/sys/kernel/hostname"); h && !h->empty()) {
    return *h;
  }
  if (!root.IsReal()) return "";
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string Arch(const Sysroot& root) {
  // /proc/sys/kernel/arch exists on newer kernels and in fixtures; uname
  // is the agent's own (same host) otherwise.
  if (auto a = root.ReadLine("/proc/sys/kernel/arch"); a && !a->empty()) return *a;
  utsname u{};
  uname(&u);
  return u.machine;
}

void AddShm(const Sysroot& root, json* sys) {
  const std::string path = root.Path("/dev/shm");
  struct statvfs st {};
  if (!root.IsDir("/dev/shm")) {
    (*sys)["shm_bytes"] = nullptr;
    (*sys)["shm_bytes_reason"] = path + " does not exist";
  } else if (statvfs(path.c_str(), &st) != 0) {
    (*sys)["shm_bytes"] = nullptr;
    (*sys)["shm_bytes_reason"] = "statvfs " + path + " failed";
  } else {
    (*sys)["shm_bytes"] = static_cast<long long>(st.f_blocks) * static_cast<long long>(st.f_frsize);
  }
}

void AddMemlock(const Sysroot& root, json* sys) {
  if (root.IsReal()) {
    rlimit rl{};
    if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0) {
      (*sys)["memlock"] = rl.rlim_cur == RLIM_INFINITY ? json("unlimited")
                                                       : json(static_cast<long long>(rl.rlim_cur));
      return;
    }
  }
  auto limits = root.Read("/proc/self/limits");
  json v = limits.ok() ? ParseMemlockFromLimits(*limits) : json(nullptr);
  (*sys)["memlock"] = v;
  if (v.is_null()) {
    (*sys)["memlock_reason"] =
        limits.ok() ? "no 'Max locked memory' line in " + root.Path("/proc/self/limits")
                    : limits.status().message();
  }
}

}  // namespace

std::map<std::string, std::string> ParseOsRelease(const std::string& text) {
  std::map<std::string, std::string> kv;
  for (auto& [k, v] : KeyValueLines(text)) kv[k] = Unquote(v);
  return kv;
}

CpuSummary ParseCpuInfo(const std::string& text) {
  CpuSummary cpu;
  std::set<std::string> sockets;
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical_id;
  int cores_per_socket = 0;
  std::string fallback_model;
  std::istringstream in(text);
  std::string line, key, value;
  while (std::getline(in, line)) {
    if (!SplitColon(line, &key, &value)) continue;
    if (key == "processor") {
      ++cpu.threads;
      physical_id.clear();
    } else if (key == "model name") {
      if (cpu.model.empty()) cpu.model = value;
    } else if (key == "Model" || key == "cpu model") {
      if (fallback_model.empty()) fallback_model = value;  // arm64, mips
    } else if (key == "physical id") {
      physical_id = value;
      sockets.insert(value);
    } else if (key == "core id") {
      cores.insert({physical_id, value});
    } else if (key == "cpu cores") {
      cores_per_socket = std::atoi(value.c_str());
    }
  }
  if (cpu.model.empty()) cpu.model = fallback_model;
  cpu.sockets = sockets.empty() ? (cpu.threads > 0 ? 1 : 0) : static_cast<int>(sockets.size());
  if (!cores.empty()) {
    cpu.cores = static_cast<int>(cores.size());
  } else if (cores_per_socket > 0) {
    cpu.cores = cores_per_socket * cpu.sockets;
  } else {
    cpu.cores = cpu.threads;  // no topology lines (arm64, some VMs)
  }
  return cpu;
}

std::optional<long long> ParseMemTotalBytes(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string line, key, value;
  while (std::getline(in, line)) {
    if (!SplitColon(line, &key, &value) || key != "MemTotal") continue;
    long long kb = 0;
    std::string unit;
    std::istringstream v(value);
    if (!(v >> kb)) return std::nullopt;
    v >> unit;
    return unit == "kB" || unit.empty() ? kb * 1024 : kb;
  }
  return std::nullopt;
}

json ParseMemlockFromLimits(const std::string& limits) {
  std::istringstream in(limits);
  std::string line;
  const std::string kKey = "Max locked memory";
  while (std::getline(in, line)) {
    if (line.rfind(kKey, 0) != 0) continue;
    std::istringstream rest(line.substr(kKey.size()));
    std::string soft;
    if (!(rest >> soft)) return nullptr;
    if (soft == "unlimited") return "unlimited";
    try {
      return std::stoll(soft);
    } catch (...) {
      return nullptr;
    }
  }
  return nullptr;
}

json CollectSystemFacts(const Sysroot& root) {
  json sys;
  sys["hostname"] = Hostname(root);
  sys["os"] = OsFacts(root);
  auto kernel = root.ReadLine("/proc/sys/kernel/osrelease");
  sys["kernel"] = kernel ? json(*kernel) : json(nullptr);
  json glibc = GlibcVersion(root);
  sys["glibc"] = glibc["version"];
  sys["arch"] = Arch(root);

  auto cpuinfo = root.Read("/proc/cpuinfo");
  if (cpuinfo.ok()) {
    CpuSummary c = ParseCpuInfo(*cpuinfo);
    sys["cpu"] = {
        {"model", c.model}, {"sockets", c.sockets}, {"cores", c.cores}, {"threads", c.threads}};
  } else {
    sys["cpu"] = {{"model", nullptr},
                  {"sockets", nullptr},
                  {"cores", nullptr},
                  {"threads", nullptr},
                  {"reason", cpuinfo.status().message()}};
  }
  auto meminfo = root.Read("/proc/meminfo");
  auto mem = meminfo.ok() ? ParseMemTotalBytes(*meminfo) : std::nullopt;
  sys["memory_bytes"] = mem ? json(*mem) : json(nullptr);
  AddShm(root, &sys);
  AddMemlock(root, &sys);
  return sys;
}

}  // namespace cc::agent
