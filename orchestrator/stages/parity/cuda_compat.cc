#include "orchestrator/stages/parity/cuda_compat.h"

#include <charconv>

#include "orchestrator/stages/parity/version_pin.h"

namespace cc {
namespace {

struct CudaRelease {
  int major = 0;
  int minor = 0;
};

// Source: NVIDIA CUDA Toolkit Release Notes (13.2 Update 2), Table 3 "CUDA
// Toolkit and Corresponding Driver Versions", Linux x86_64 column, the GA
// row of each release (an Update row may name a newer driver; the GA driver
// is the oldest that runs everything of that major.minor). 11.0 lists
// "11.0.2 GA". There was no CUDA 12.7.
struct ToolkitDriver {
  CudaRelease cuda;
  const char* driver;
};
constexpr ToolkitDriver kToolkitDrivers[] = {
    {{11, 0}, "450.51.05"}, {{11, 1}, "455.23"},    {{11, 2}, "460.27.03"}, {{11, 3}, "465.19.01"},
    {{11, 4}, "470.42.01"}, {{11, 5}, "495.29.05"}, {{11, 6}, "510.39.01"}, {{11, 7}, "515.43.04"},
    {{11, 8}, "520.61.05"}, {{12, 0}, "525.60.13"}, {{12, 1}, "530.30.02"}, {{12, 2}, "535.54.03"},
    {{12, 3}, "545.23.06"}, {{12, 4}, "550.54.14"}, {{12, 5}, "555.42.02"}, {{12, 6}, "560.28.03"},
    {{12, 8}, "570.26"},    {{12, 9}, "575.51.03"}, {{13, 0}, "580.65.06"}, {{13, 1}, "590.44.01"},
    {{13, 2}, "595.45.04"},
};

// Source: the same release notes, Table 2 "CUDA Toolkit and Minimum Required
// Driver Version for CUDA Minor Version Compatibility" (13.x >= 580, 12.x
// >= 525, 11.x >= 450), made exact: 11.x needs 450.80.02 (the note under
// that table: CUDA 11.0 shipped earlier, minor version compatibility starts
// at the Tesla recommended driver 450.80.02); 12.x and 13.x start at their
// first GA's driver, 525.60.13 and 580.65.06, as older notes list them.
struct FamilyMinimum {
  int major;
  const char* driver;
};
constexpr FamilyMinimum kFamilyMinimums[] = {
    {11, "450.80.02"}, {12, "525.60.13"}, {13, "580.65.06"}};

const char* kNoPtxJit = "with limitations (no PTX JIT of newer code)";

bool ParseInt(std::string_view s, int& out) {
  if (s.empty() || s.size() > 6) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::optional<CudaRelease> ParseCuda(const std::string& cuda) {
  std::string_view s = cuda;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  size_t dot = s.find('.');
  CudaRelease r;
  if (dot == std::string_view::npos) {
    // cuDriverGetVersion's integer: 1000 * major + 10 * minor.
    int v = 0;
    if (!ParseInt(s, v) || v < 1000) return std::nullopt;
    return CudaRelease{v / 1000, (v % 1000) / 10};
  }
  size_t end = s.find('.', dot + 1);
  std::string_view minor =
      s.substr(dot + 1, end == std::string_view::npos ? std::string_view::npos : end - dot - 1);
  if (!ParseInt(s.substr(0, dot), r.major) || !ParseInt(minor, r.minor)) {
    return std::nullopt;
  }
  if (end != std::string_view::npos) {
    int patch = 0;
    if (!ParseInt(s.substr(end + 1), patch)) return std::nullopt;
  }
  return r;
}

std::string Name(CudaRelease r) { return std::to_string(r.major) + "." + std::to_string(r.minor); }

const char* ToolkitDriverOf(CudaRelease r) {
  for (const ToolkitDriver& t : kToolkitDrivers) {
    if (t.cuda.major == r.major && t.cuda.minor == r.minor) return t.driver;
  }
  return nullptr;
}

const char* FamilyMinimumOf(int major) {
  for (const FamilyMinimum& f : kFamilyMinimums) {
    if (f.major == major) return f.driver;
  }
  return nullptr;
}

CompatVerdict Verdict(Outcome o, std::string required, std::string message) {
  return CompatVerdict{o, std::move(required), std::move(message)};
}

}  // namespace

std::optional<std::string> CudaMajorMinor(const std::string& cuda) {
  std::optional<CudaRelease> r = ParseCuda(cuda);
  if (!r) return std::nullopt;
  return Name(*r);
}

std::optional<std::string> MinimumDriverFor(const std::string& cuda) {
  std::optional<CudaRelease> r = ParseCuda(cuda);
  const char* d = r ? ToolkitDriverOf(*r) : nullptr;
  if (!d) return std::nullopt;
  return std::string(d);
}

std::optional<std::string> MinorCompatDriverFor(const std::string& cuda) {
  std::optional<CudaRelease> r = ParseCuda(cuda);
  const char* d = r ? FamilyMinimumOf(r->major) : nullptr;
  if (!d) return std::nullopt;
  return std::string(d);
}

std::string NewestCudaInTable() { return Name(std::end(kToolkitDrivers)[-1].cuda); }

std::optional<std::string> CudaFromNcclVersion(const std::string& nccl) {
  size_t at = nccl.find("+cuda");
  if (at == std::string::npos) return std::nullopt;
  return CudaMajorMinor(nccl.substr(at + 5));
}

CompatVerdict JudgeDriverForCuda(const std::string& driver, const std::string& cuda,
                                 const std::string& needed_by) {
  std::optional<CudaRelease> r = ParseCuda(cuda);
  if (!r) {
    return Verdict(Outcome::kError, "",
                   "\"" + cuda + "\" (needed by " + needed_by + ") is not a CUDA version");
  }
  if (!IsVersionLike(driver)) {
    return Verdict(Outcome::kError, "", "driver \"" + driver + "\" is not a version");
  }
  const std::string name = Name(*r);
  const std::string why = " (needed by " + needed_by + ")";
  const char* family = FamilyMinimumOf(r->major);
  const char* toolkit = ToolkitDriverOf(*r);
  if (!family) {
    return Verdict(Outcome::kSkip, "",
                   "no driver table entry for CUDA " + name + why + "; the table covers 11.0 to " +
                       NewestCudaInTable());
  }
  // CUDA 11.0 shipped with a driver older than its family's minimum; its
  // own driver runs it.
  if (toolkit && CompareVersions(toolkit, family) < 0) family = toolkit;
  if (CompareVersions(driver, family) < 0) {
    std::string message =
        "driver " + driver + " is older than " + family + ", the minimum for CUDA " + name + why;
    if (toolkit && CompareVersions(toolkit, family) > 0) {
      message += std::string("; CUDA ") + name + "'s own driver is " + toolkit;
    }
    return Verdict(Outcome::kFail, std::string(">=") + family, message);
  }
  if (!toolkit) {
    return Verdict(Outcome::kWarn, std::string(">=") + family,
                   "CUDA " + name + why + " is not in the driver table (" + "11.0 to " +
                       NewestCudaInTable() + "); driver " + driver + " meets the CUDA " +
                       std::to_string(r->major) + ".x minimum " + family);
  }
  if (CompareVersions(driver, toolkit) < 0) {
    return Verdict(Outcome::kWarn, std::string(">=") + toolkit,
                   "driver " + driver + " is older than " + toolkit + ", the driver of CUDA " +
                       name + why + "; it works through minor version compatibility (>= " + family +
                       ") " + kNoPtxJit);
  }
  return Verdict(Outcome::kPass, std::string(">=") + toolkit,
                 "driver " + driver + " is new enough for CUDA " + name + why);
}

CompatVerdict JudgeCudaDriverVersion(const std::string& cuda_driver, const std::string& cuda,
                                     const std::string& needed_by) {
  std::optional<CudaRelease> have = ParseCuda(cuda_driver);
  std::optional<CudaRelease> need = ParseCuda(cuda);
  if (!need) {
    return Verdict(Outcome::kError, "",
                   "\"" + cuda + "\" (needed by " + needed_by + ") is not a CUDA version");
  }
  if (!have) {
    return Verdict(Outcome::kError, "",
                   "cuda_driver \"" + cuda_driver + "\" is not a CUDA version");
  }
  const std::string required = ">=" + Name(*need);
  const std::string head = "the driver supports CUDA " + Name(*have);
  const std::string why = " (needed by " + needed_by + ")";
  if (have->major < need->major) {
    return Verdict(Outcome::kFail, required, head + ", older than CUDA " + Name(*need) + why);
  }
  if (have->major == need->major && have->minor < need->minor) {
    return Verdict(Outcome::kWarn, required,
                   head + ", older than CUDA " + Name(*need) + why +
                       "; it works through minor version compatibility " + kNoPtxJit);
  }
  return Verdict(Outcome::kPass, required, head + ", enough for CUDA " + Name(*need) + why);
}

}  // namespace cc
