#include "orchestrator/stages/health/xid_catalog.h"

namespace cc {
namespace {

using A = HealthAction;

struct XidRow {
  int code;
  const char* meaning;
  A action;
};

// NVIDIA's Xid catalog (see the header), the codes operators of HGX/DGX
// clusters meet; the comment says why the action is what it is.
constexpr XidRow kXids[] = {
    {13, "graphics engine exception", A::kInvestigate},       // usually the job's own bug
    {31, "GPU memory page fault", A::kInvestigate},           // the job's, or a driver bug
    {43, "GPU stopped processing", A::kInvestigate},          // the job's; restart it
    {45, "preemptive cleanup after earlier errors", A::kOk},  // a process was killed
    {48, "double-bit ECC error", A::kResetGpu},  // a reset remaps the row / retires the page
    {61, "internal micro-controller breakpoint/warning", A::kResetGpu},
    {62, "internal micro-controller halt", A::kResetGpu},
    {63, "ECC page retirement or row remapping recorded", A::kResetGpu},       // applied at reset
    {64, "ECC page retirement or row remapping failed to record", A::kDrain},  // RMA
    {68, "video decoder (NVDEC) exception", A::kInvestigate},
    {69, "graphics engine class error", A::kInvestigate},
    {74, "NVLink error", A::kResetGpu},              // then check the links; RMA if it recurs
    {79, "GPU has fallen off the bus", A::kReboot},  // drain if it recurs after the reboot
    {92, "high single-bit ECC error rate", A::kInvestigate},
    {94, "contained ECC error", A::kResetGpu},
    {95, "uncontained ECC error", A::kResetGpu},
    {119, "GSP RPC timeout", A::kResetGpu},  // reboot if the reset does not clear it
    {120, "GSP error", A::kResetGpu},
    {140, "unrecovered ECC error", A::kResetGpu},
    {154, "GPU recovery action changed", A::kInvestigate},  // the line says which (below)
};

// Xid 154's line names the driver's own recovery action:
// "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)".
A RecoveryActionOf(const std::string& text) {
  size_t to = text.rfind(" to ");
  std::string tail = to == std::string::npos ? text : text.substr(to);
  if (tail.find("Drain") != std::string::npos) return A::kDrain;  // "Drain P2P", "Drain and Reset"
  if (tail.find("Reboot") != std::string::npos) return A::kReboot;
  if (tail.find("Reset") != std::string::npos) return A::kResetGpu;
  if (tail.find("(None)") != std::string::npos) return A::kOk;
  return A::kInvestigate;
}

}  // namespace

XidInfo LookupXid(int code, const std::string& text) {
  XidInfo info;
  info.code = code;
  for (const auto& row : kXids) {
    if (row.code != code) continue;
    info.meaning = row.meaning;
    info.action = code == 154 ? RecoveryActionOf(text) : row.action;
    info.known = true;
    return info;
  }
  info.meaning = "Xid " + std::to_string(code) + " (not in clustercheck's table)";
  return info;
}

XidInfo LookupSxid(int code, const std::string& text) {
  XidInfo info;
  info.code = code;
  bool non_fatal =
      text.find("Non-fatal") != std::string::npos || text.find("non-fatal") != std::string::npos;
  bool fatal = !non_fatal && text.find("Fatal") != std::string::npos;
  info.meaning =
      std::string(fatal ? "fatal" : "non-fatal") + " NVSwitch error SXid " + std::to_string(code);
  info.action = fatal ? A::kReboot : A::kInvestigate;
  info.known = true;
  return info;
}

std::vector<int> KnownXidCodes() {
  std::vector<int> out;
  for (const auto& row : kXids) out.push_back(row.code);
  return out;
}

}  // namespace cc
