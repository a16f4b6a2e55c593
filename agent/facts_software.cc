#include "agent/facts_software.h"

#include <gnu/libc-version.h>

#include <sstream>

#include "agent/facts_rdma.h"

namespace cc::agent {

using nlohmann::json;

namespace {

constexpr double kHelperDeadlineS = 5;
constexpr double kTorchDeadlineS = 20;

const char* const kLibDirs[] = {
    "/lib/x86_64-linux-gnu",  "/usr/lib/x86_64-linux-gnu",  "/lib64",   "/usr/lib64",
    "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib",
};

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::vector<std::string> SplitOn(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

// Runs a helper that prints its version; "" and *reason when it could not.
std::optional<std::string> HelperOutput(const std::vector<std::string>& argv, std::string* reason) {
  ExecResult r = RunProgram(argv, Deadline::InSeconds(FactsDeadlineS(kHelperDeadlineS)));
  if (!r.started) {
    *reason = r.error;
  } else if (r.timed_out) {
    *reason = argv[0] + " did not finish within " + FactsDeadlineText(kHelperDeadlineS);
  } else if (r.exit_code != 0) {
    *reason =
        argv[0] + " exited with " + std::to_string(r.exit_code) + ": " + Trim(r.err).substr(0, 200);
  } else {
    return r.out;
  }
  return std::nullopt;
}

json RdmaCoreVersion(const Sysroot& root) {
  for (const char* dir : kLibDirs) {
    if (auto v = RdmaCoreFromVerbsNames(root.List(dir))) {
      return {{"version", *v}, {"source", root.Path(dir) + "/libibverbs.so.1.*"}};
    }
  }
  if (auto status = root.Read("/var/lib/dpkg/status"); status.ok()) {
    for (const char* pkg : {"rdma-core", "ibverbs-providers", "libibverbs1"}) {
      if (auto v = DpkgVersion(*status, pkg)) {
        return {{"version", *v}, {"source", std::string("dpkg ") + pkg}};
      }
    }
  }
  std::string reason = "no libibverbs.so.1.* in the usual library folders";
  if (root.IsReal()) {
    std::string why;
    if (auto out = HelperOutput({"ibv_devinfo", "--version"}, &why)) {
      std::istringstream in(*out);
      std::string tok, last;
      while (in >> tok) {
        if (!tok.empty() && tok[0] >= '0' && tok[0] <= '9') last = tok;
      }
      if (!last.empty()) return {{"version", last}, {"source", "ibv_devinfo --version"}};
    }
    reason += "; " + why;
  }
  return {{"version", nullptr}, {"reason", reason}};
}

json OfedVersion(const Sysroot& root) {
  if (auto v = root.ReadLine("/sys/module/mlx5_core/version"); v && !v->empty()) {
    return {{"version", *v}, {"source", root.Path("/sys/module/mlx5_core/version")}};
  }
  std::string reason = "no /sys/module/mlx5_core/version (inbox driver or no mlx5)";
  if (root.IsReal()) {
    std::string why;
    if (auto out = HelperOutput({"ofed_info", "-s"}, &why)) {
      if (auto v = ParseOfedInfo(*out)) return {{"version", *v}, {"source", "ofed_info -s"}};
      why = "ofed_info -s printed nothing usable";
    }
    reason += "; " + why;
  }
  return {{"version", nullptr}, {"reason", reason}};
}

bool ModuleLoaded(const Sysroot& root, const std::vector<std::string>& names) {
  for (const auto& n : names) {
    if (root.IsDir("/sys/module/" + n)) return true;
  }
  auto mods = root.Read("/proc/modules");
  if (!mods.ok()) return false;
  std::istringstream in(*mods);
  std::string line;
  while (std::getline(in, line)) {
    std::string first = line.substr(0, line.find(' '));
    for (const auto& n : names) {
      if (first == n) return true;
    }
  }
  return false;
}

}  // namespace

// glibc ------------------------------------------------------------------

std::optional<std::string> ParseGlibcBanner(const std::string& bytes) {
  const std::string kKey = "release version ";
  size_t at = bytes.find(kKey);
  if (at == std::string::npos) return std::nullopt;
  size_t b = at + kKey.size(), e = b;
  while (e < bytes.size() && ((bytes[e] >= '0' && bytes[e] <= '9') || bytes[e] == '.')) ++e;
  while (e > b && bytes[e - 1] == '.') --e;  // the sentence's full stop
  if (e == b) return std::nullopt;
  return bytes.substr(b, e - b);
}

json GlibcVersion(const Sysroot& root) {
  if (root.IsReal()) {
    return {{"version", gnu_get_libc_version()}, {"source", "gnu_get_libc_version()"}};
  }
  for (const char* dir : kLibDirs) {
    const std::string path = std::string(dir) + "/libc.so.6";
    auto bytes = root.Read(path);
    if (!bytes.ok()) continue;
    if (auto v = ParseGlibcBanner(*bytes)) {
      return {{"version", *v}, {"source", root.Path(path)}};
    }
  }
  return {{"version", nullptr},
          {"reason", "no libc.so.6 with a version banner under " + root.root()}};
}

// RDMA -------------------------------------------------------------------

std::optional<std::string> RdmaCoreFromVerbsNames(const std::vector<std::string>& names) {
  const std::string kPrefix = "libibverbs.so.1.";
  for (const auto& n : names) {
    if (n.rfind(kPrefix, 0) != 0) continue;
    // libibverbs.so.1.<abi minor>.<rdma-core version>
    std::string rest = n.substr(kPrefix.size());
    size_t dot = rest.find('.');
    if (dot == std::string::npos || dot + 1 >= rest.size()) continue;
    return rest.substr(dot + 1);
  }
  return std::nullopt;
}

std::optional<std::string> DpkgVersion(const std::string& status, const std::string& package) {
  // Paragraphs separated by blank lines.
  std::istringstream in(status + "\n\n");
  std::string line, pkg, state, version;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (pkg == package && state.find(" installed") != std::string::npos && !version.empty()) {
        size_t colon = version.find(':');  // epoch
        if (colon != std::string::npos) version = version.substr(colon + 1);
        return version.substr(0, version.find('-'));
      }
      pkg.clear(), state.clear(), version.clear();
      continue;
    }
    if (line.rfind("Package: ", 0) == 0) pkg = Trim(line.substr(9));
    if (line.rfind("Status: ", 0) == 0) state = Trim(line.substr(8));
    if (line.rfind("Version: ", 0) == 0) version = Trim(line.substr(9));
  }
  return std::nullopt;
}

std::optional<std::string> ParseOfedInfo(const std::string& out) {
  std::string v = Trim(out);
  v = v.substr(0, v.find('\n'));
  v = Trim(v);
  while (!v.empty() && v.back() == ':') v.pop_back();
  if (v.empty()) return std::nullopt;
  return v;
}

bool KernelAtLeast(const std::string& release, int major, int minor) {
  int ma = 0, mi = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &ma, &mi) != 2) return false;
  return ma > major || (ma == major && mi >= minor);
}

json ParseNvidiaDriverVersion(const std::string& text) {
  // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.15  Release Build ..."
  std::string first = text.substr(0, text.find('\n'));
  if (first.find("NVRM version") == std::string::npos) return nullptr;
  std::string version;
  std::istringstream in(first);
  std::string tok;
  while (in >> tok) {
    auto parts = SplitOn(tok, '.');
    bool numeric = parts.size() >= 2;
    for (const auto& p : parts) numeric = numeric && AllDigits(p);
    if (numeric) {
      version = tok;
      break;
    }
  }
  if (version.empty()) return nullptr;
  bool open = first.find("Open Kernel Module") != std::string::npos;
  return {{"version", version}, {"flavor", open ? "open" : "proprietary"}};
}

std::string StripSysfsEnumPrefix(const std::string& s) {
  size_t colon = s.find(':');
  if (colon == std::string::npos || !AllDigits(Trim(s.substr(0, colon)))) return s;
  return Trim(s.substr(colon + 1));
}

json CollectRdmaFacts(const Sysroot& root) {
  json r;
  r["ib_devices"] = CollectIbDevices(root);
  json core = RdmaCoreVersion(root);
  r["rdma_core_version"] = core["version"];
  r["rdma_core_source"] = core.contains("source") ? core["source"] : core["reason"];
  json ofed = OfedVersion(root);
  r["ofed_version"] = ofed["version"];
  r["ofed_source"] = ofed.contains("source") ? ofed["source"] : ofed["reason"];
  r["nvidia_peermem"] = ModuleLoaded(root, {"nvidia_peermem", "nv_peer_mem"});

  json driver = nullptr;
  if (auto text = root.Read("/proc/driver/nvidia/version"); text.ok()) {
    driver = ParseNvidiaDriverVersion(*text);
  }
  r["nvidia_driver"] = driver;
  auto kernel = root.ReadLine("/proc/sys/kernel/osrelease");
  bool nvidia = !driver.is_null() || root.IsDir("/sys/module/nvidia");
  // GPUDirect over DMA-BUF needs kernel >= 5.12 and NVIDIA's open kernel
  // modules; without it NCCL needs nvidia_peermem for GDR.
  if (!kernel) {
    r["dmabuf_possible"] = false;
    r["dmabuf_reason"] = "kernel release unknown";
  } else if (!KernelAtLeast(*kernel, 5, 12)) {
    r["dmabuf_possible"] = false;
    r["dmabuf_reason"] = "kernel " + *kernel + " is older than 5.12";
  } else if (!nvidia) {
    r["dmabuf_possible"] = false;
    r["dmabuf_reason"] = "no NVIDIA kernel module loaded";
  } else if (!driver.is_null() && driver["flavor"] == "proprietary") {
    r["dmabuf_possible"] = false;
    r["dmabuf_reason"] = "NVIDIA proprietary kernel module; DMA-BUF needs the open kernel modules";
  } else {
    r["dmabuf_possible"] = true;
    r["dmabuf_reason"] =
        "kernel " + *kernel + " >= 5.12 and NVIDIA " +
        (driver.is_null() ? std::string("module loaded (flavor unknown)")
                          : "open kernel module " + driver["version"].get<std::string>());
  }
  return r;
}

// Open MPI ---------------------------------------------------------------

std::optional<std::string> ParseOmpiInfoVersion(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  const std::string kKey = "ompi:version:full:";
  while (std::getline(in, line)) {
    if (line.rfind(kKey, 0) == 0) {
      std::string v = Trim(line.substr(kKey.size()));
      if (!v.empty()) return v;
    }
  }
  return std::nullopt;
}

json CollectMpiFacts(const Sysroot& root) {
  if (!root.IsReal()) {
    return {{"status", "skip"},
            {"openmpi_version", nullptr},
            {"reason", "sysroot " + root.root() + " is not the real root: ompi_info not run"}};
  }
  ExecResult r = RunProgram({"ompi_info", "--parsable"},
                            Deadline::InSeconds(FactsDeadlineS(kHelperDeadlineS)));
  if (!r.started) {
    return {{"status", "absent"},
            {"openmpi_version", nullptr},
            {"reason", "ompi_info not found on PATH (" + r.error + ")"}};
  }
  if (r.timed_out) {
    return {{"status", "error"},
            {"openmpi_version", nullptr},
            {"reason",
             "ompi_info --parsable did not finish within " + FactsDeadlineText(kHelperDeadlineS)}};
  }
  if (auto v = ParseOmpiInfoVersion(r.out)) {
    return {{"status", "ok"}, {"openmpi_version", *v}};
  }
  return {{"status", "error"},
          {"openmpi_version", nullptr},
          {"reason", "ompi_info --parsable (exit " + std::to_string(r.exit_code) +
                         ") printed no ompi:version:full line"}};
}

// PyTorch ----------------------------------------------------------------

const char* TorchProbeScript() {
  return R"PY(
import json, sys
try:
    import torch
except Exception as e:
    print(json.dumps({"import_error": "%s: %s" % (type(e).__name__, e)}))
    sys.exit(0)
r = {"version": torch.__version__, "cuda": torch.version.cuda}
try:
    r["cuda_available"] = bool(torch.cuda.is_available())
    r["device_count"] = int(torch.cuda.device_count())
except Exception as e:
    r["cuda_error"] = str(e)
try:
    v = torch.cuda.nccl.version()
    r["nccl"] = ".".join(str(x) for x in v) if isinstance(v, (tuple, list)) else str(v)
except Exception as e:
    r["nccl"] = None
    r["nccl_error"] = str(e)
try:
    r["cudnn"] = torch.backends.cudnn.version()
except Exception:
    r["cudnn"] = None
print(json.dumps(r))
)PY";
}

json TorchFactsFromRun(const std::string& python, const ExecResult& run) {
  if (!run.started) {
    return {{"status", "absent"}, {"reason", "cannot run " + python + ": " + run.error}};
  }
  if (run.timed_out) {
    return {{"status", "error"},
            {"reason", python + " -c <torch probe> did not finish within " +
                           FactsDeadlineText(kTorchDeadlineS)}};
  }
  // The last line that parses as a JSON object is ours; imports may print.
  json probe;
  std::istringstream in(run.out);
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.is_object()) probe = j;
  }
  if (probe.is_null()) {
    std::string err = Trim(run.err);
    if (err.size() > 300) err = "..." + err.substr(err.size() - 300);
    return {{"status", "error"},
            {"reason", python + " exited with " + std::to_string(run.exit_code) +
                           " without a result: " + err}};
  }
  if (probe.contains("import_error")) {
    return {{"status", "absent"},
            {"reason",
             "import torch failed in " + python + ": " + probe["import_error"].get<std::string>()}};
  }
  probe["status"] = "ok";
  probe["python"] = python;
  return probe;
}

json CollectTorchFacts(const Sysroot& root, const std::string& python) {
  if (python.empty()) return {{"status", "skip"}, {"reason", "no python given for this node"}};
  if (!root.IsReal()) {
    return {{"status", "skip"},
            {"reason", "sysroot " + root.root() + " is not the real root: python not run"}};
  }
  ExecResult r = RunProgram({python, "-c", TorchProbeScript()},
                            Deadline::InSeconds(FactsDeadlineS(kTorchDeadlineS)));
  return TorchFactsFromRun(python, r);
}

}  // namespace cc::agent
