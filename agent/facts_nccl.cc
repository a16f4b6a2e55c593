#include "agent/facts_nccl.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "agent/dynlib.h"
#include "agent/facts_exec.h"
#include "common/join.h"
#include "common/shell_frame.h"

namespace cc::agent {

using nlohmann::json;

namespace {

constexpr double kLoginEnvDeadlineS = 5;

const char* const kNcclDirs[] = {
    "/usr/lib/x86_64-linux-gnu",
    "/usr/local/cuda/lib64",
    "/usr/local/nccl/lib",
    "/opt/nccl/lib",
    "/usr/lib64",
};

// NCCL reads these as integers (strtoll): "1", "01" and " 1" all enable.
bool IsNonZeroInt(const std::string& v) {
  char* end = nullptr;
  long long x = std::strtoll(v.c_str(), &end, 0);
  return end != v.c_str() && x != 0;
}

std::string From(const EnvMap& source, const std::string& var) {
  auto it = source.find(var);
  return it == source.end() ? "" : " (from " + it->second + ")";
}

std::vector<std::string> Selected(const IfList& list, const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& n : names) {
    if (IfListSelects(list, n)) out.push_back(n);
  }
  return out;
}

void WarnIfList(const EnvMap& eff, const EnvMap& source, const std::string& var,
                const std::vector<std::string>& have, const std::string& what,
                std::vector<std::string>* warnings) {
  auto it = eff.find(var);
  if (it == eff.end() || Trim(it->second).empty()) return;
  IfList list = ParseIfList(it->second);
  std::vector<std::string> picked = Selected(list, have);
  if (!list.exclude && picked.empty()) {
    warnings->push_back(var + "=" + it->second + From(source, var) + " matches no " + what +
                        " on this node (" + what +
                        "s: " + (have.empty() ? "none" : Join(have, ", ")) +
                        "): NCCL init fails or falls back");
  } else if (list.exclude && var == "NCCL_SOCKET_IFNAME") {
    bool only_lo = true;
    for (const auto& p : picked) only_lo = only_lo && p == "lo";
    if (only_lo) {
      warnings->push_back(var + "=" + it->second + From(source, var) +
                          " excludes every interface but loopback");
    }
  }
}

void AddConf(const Sysroot& root, const std::string& path, const std::string& label, json* conf,
             json* searched, std::vector<std::pair<std::string, EnvMap>>* layers) {
  searched->push_back(root.Path(path));
  auto text = root.Read(path);
  if (!text.ok()) return;
  EnvMap m = ParseNcclConf(*text);
  (*conf)[label] = m;
  layers->push_back({label, m});
}

// Maps the library file and looks for its build string; the file is large
// (hundreds of MB of device code), so it is mapped, not read.
std::optional<std::string> BuildStringOf(const std::string& path, const std::string& version) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<std::string> found;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      found = FindNcclBuildString(
          std::string_view(static_cast<const char*>(p), static_cast<size_t>(st.st_size)), version);
      munmap(p, static_cast<size_t>(st.st_size));
    }
  }
  close(fd);
  return found;
}

}  // namespace

// Library ----------------------------------------------------------------

std::string NcclVersionString(int code) {
  int major, minor, patch;
  if (code >= 10000) {
    major = code / 10000;
    minor = (code / 100) % 100;
  } else {
    major = code / 1000;
    minor = (code / 100) % 10;
  }
  patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<std::string> FindNcclBuildString(std::string_view bytes, const std::string& version) {
  const std::string needle = "NCCL version " + version;
  size_t at = 0;
  while ((at = bytes.find(needle, at)) != std::string_view::npos) {
    size_t b = at + needle.size() - version.size(), e = b;
    auto ok = [](char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || c == '.' || c == '+';
    };
    while (e < bytes.size() && ok(bytes[e])) ++e;
    std::string token(bytes.substr(b, e - b));
    size_t after = at + needle.size();
    bool longer = after < bytes.size() && (bytes[after] >= '0' && bytes[after] <= '9');
    if (!longer && token.find("+cuda") != std::string::npos) return token;
    at += needle.size();
  }
  return std::nullopt;
}

std::vector<std::string> NcclCandidates(const std::vector<std::string>& library_paths,
                                        const std::string& ld_library_path) {
  std::vector<std::string> dirs = library_paths;
  for (const auto& d : SplitSearchPath(ld_library_path)) dirs.push_back(d);
  for (const char* d : kNcclDirs) dirs.push_back(d);
  return LibraryCandidates(dirs, "libnccl.so.2");
}

json CollectNcclFacts(const std::vector<std::string>& library_paths,
                      const std::vector<std::string>& candidates) {
  const char* llp = std::getenv("LD_LIBRARY_PATH");
  auto cands = candidates.empty() ? NcclCandidates(library_paths, llp ? llp : "") : candidates;
  DynlibSearch search;
  Dynlib lib = Dynlib::OpenFirst(cands, &search);
  json out;
  out["searched"] = search.SearchedJson();
  if (!lib.loaded()) {
    out["status"] = "absent";
    out["reason"] = "libnccl.so.2 not found in " + std::to_string(cands.size()) + " places";
    return out;
  }
  out["path"] = lib.real_path();
  int (*get_version)(int*) = nullptr;
  std::string err;
  if (!lib.Bind("ncclGetVersion", &get_version, &err)) {
    out["status"] = "error";
    out["reason"] = lib.real_path() + ": " + err;
    return out;
  }
  int code = 0;
  int r = get_version(&code);
  if (r != 0) {
    out["status"] = "error";
    out["reason"] = "ncclGetVersion returned ncclResult_t " + std::to_string(r);
    return out;
  }
  out["status"] = "ok";
  out["version"] = NcclVersionString(code);
  out["version_code"] = code;
  if (auto full = BuildStringOf(lib.real_path(), out["version"])) out["version_full"] = *full;
  return out;
}

// Environment ------------------------------------------------------------

EnvMap ParseNcclConf(const std::string& text) {
  EnvMap m;
  for (auto& [k, v] : KeyValueLines(text)) {
    if (k.find_first_of(" \t") == std::string::npos) m[k] = v;
  }
  return m;
}

EnvMap NcclVarsFromEnvText(const std::string& text, char sep) {
  EnvMap m;
  std::istringstream in(text);
  std::string entry;
  while (std::getline(in, entry, sep)) {
    if (entry.rfind("NCCL_", 0) != 0) continue;
    size_t eq = entry.find('=');
    if (eq == std::string::npos) continue;
    m[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return m;
}

IfList ParseIfList(const std::string& spec) {
  IfList l;
  std::string s = Trim(spec);
  if (!s.empty() && s[0] == '^') {
    l.exclude = true;
    s = s.substr(1);
  }
  if (!s.empty() && s[0] == '=') {
    l.exact = true;
    s = s.substr(1);
  }
  std::istringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    item = Trim(item.substr(0, item.find(':')));
    if (!item.empty()) l.names.push_back(item);
  }
  return l;
}

bool IfListSelects(const IfList& list, const std::string& name) {
  bool match = false;
  for (const auto& n : list.names) {
    if (list.exact ? name == n : name.rfind(n, 0) == 0) match = true;
  }
  return list.exclude ? !match : match;
}

std::vector<std::string> NcclEnvWarnings(const EnvMap& eff, const EnvMap& source,
                                         const std::vector<std::string>& interfaces,
                                         const std::vector<std::string>& ib_devices) {
  std::vector<std::string> w;
  auto flag = [&](const char* var, const char* consequence) {
    auto it = eff.find(var);
    if (it != eff.end() && IsNonZeroInt(it->second)) {
      w.push_back(std::string(var) + "=" + it->second + From(source, var) + " " + consequence);
    }
  };
  flag("NCCL_IB_DISABLE", "disables InfiniBand/RoCE: NCCL falls back to sockets");
  flag("NCCL_P2P_DISABLE",
       "disables peer-to-peer (NVLink/PCIe) between GPUs: traffic goes through host memory");
  flag("NCCL_SHM_DISABLE", "disables the shared-memory transport between processes on one node");
  if (auto it = eff.find("NCCL_NET_GDR_LEVEL"); it != eff.end()) {
    std::string v = Trim(it->second);
    if (v == "0" || v == "LOC") {
      w.push_back("NCCL_NET_GDR_LEVEL=" + it->second + From(source, "NCCL_NET_GDR_LEVEL") +
                  " disables GPUDirect RDMA: network traffic is staged through host memory");
    }
  }
  WarnIfList(eff, source, "NCCL_SOCKET_IFNAME", interfaces, "interface", &w);
  WarnIfList(eff, source, "NCCL_IB_HCA", ib_devices, "HCA", &w);
  return w;
}

json CollectNcclEnv(const Sysroot& root, const NcclEnvOptions& o) {
  json out;
  json conf = json::object();
  json searched = json::array();
  // Lowest priority first: NCCL sets a variable from a file only when it is
  // not set yet, reading NCCL_CONF_FILE (or ~/.nccl.conf) before /etc/nccl.conf.
  std::vector<std::pair<std::string, EnvMap>> layers;
  AddConf(root, "/etc/nccl.conf", "/etc/nccl.conf", &conf, &searched, &layers);
  if (auto it = o.environ.find("NCCL_CONF_FILE"); it != o.environ.end()) {
    AddConf(root, it->second, it->second, &conf, &searched, &layers);
  } else if (!o.home.empty()) {
    AddConf(root, o.home + "/.nccl.conf", "~/.nccl.conf", &conf, &searched, &layers);
  }
  out["conf"] = conf;
  out["conf_searched"] = searched;

  EnvMap env = o.environ;
  std::string env_source = "agent environment";
  if (o.login_env && root.IsReal()) {
    // Framed: login files that print (module systems, conda) must not be
    // read as the first variable.
    ShellFrame frame = NewShellFrame();
    ExecResult r = RunProgram({"bash", "-lc", FrameScript(frame, "env -0")},
                              Deadline::InSeconds(FactsDeadlineS(kLoginEnvDeadlineS)));
    if (r.started && !r.timed_out && r.exit_code == 0) {
      // The login shell starts from our environment, so its output is the
      // whole picture a login job sees.
      env = NcclVarsFromEnvText(ParseFramedOutput(frame, r.out).body, '\0');
      env_source = "login shell (bash -lc)";
      out["login_env"] = {{"status", "ok"}};
    } else {
      std::string why = !r.started ? r.error
                        : r.timed_out
                            ? "did not finish within " + FactsDeadlineText(kLoginEnvDeadlineS)
                            : "exited with " + std::to_string(r.exit_code);
      out["login_env"] = {{"status", "error"}, {"reason", "bash -lc 'env -0': " + why}};
    }
  } else if (o.login_env) {
    out["login_env"] = {{"status", "skip"},
                        {"reason", "sysroot " + root.root() + " is not the real root"}};
  }
  out["env"] = env;
  out["env_source"] = env_source;

  EnvMap effective, source;
  for (const auto& [label, m] : layers) {
    for (const auto& [k, v] : m) effective[k] = v, source[k] = label;
  }
  for (const auto& [k, v] : env) effective[k] = v, source[k] = env_source;
  out["effective"] = effective;
  out["warnings"] = NcclEnvWarnings(effective, source, o.interfaces, o.ib_devices);
  return out;
}

}  // namespace cc::agent
