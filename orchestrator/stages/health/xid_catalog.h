// What an Xid (GPU) or SXid (NVSwitch) code in the kernel log means and
// what to do about it. The meanings and resolutions follow NVIDIA's Xid
// catalog ("XID Errors", docs.nvidia.com/deploy/xid-errors, its
// "Resolution" column: RESTART_APP, RESET_GPU, RESTART_BM, CONTACT_SUPPORT)
// mapped onto our five actions (health_action.h): RESTART_APP is the job's
// problem, so `investigate`; RESTART_BM is `reboot`; CONTACT_SUPPORT and
// recording failures are `drain`. Codes not in the table are `investigate`.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/stages/health/health_action.h"

namespace cc {

struct XidInfo {
  int code = 0;
  std::string meaning;  // "GPU has fallen off the bus"
  HealthAction action = HealthAction::kInvestigate;
  bool known = false;  // in the table
};

// `text` is the whole kernel-log line: Xid 154 carries the action the
// driver itself asks for ("... to 0x2 (Node Reboot Required)").
XidInfo LookupXid(int code, const std::string& text);

// NVSwitch errors: a line marked "Fatal" needs the fabric (so the node)
// restarted; "Non-fatal" ones are investigated.
XidInfo LookupSxid(int code, const std::string& text);

// The codes the table knows, ascending (tests, docs).
std::vector<int> KnownXidCodes();

}  // namespace cc
