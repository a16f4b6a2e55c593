// The one notice for a node whose login shell talks: text printed for
// non-interactive commands (module systems, conda banners, "you have mail").
// clustercheck frames its own commands and skips the text before the agent's
// hello, so the node is still checked; but scp, sftp-server, rsync and
// mpirun's remote launch read that text as their protocol, so the operator
// gets one `warn` quoting it and the fix.
#pragma once

#include <string>

#include "orchestrator/store/store.h"

namespace cc {

// The connect/shell warn for `node`, quoting `text` (what the shell printed;
// REQUIRES: not empty). `startup_s`: the measured shell startup, for the
// evidence.
NodeResult ShellNotice(const std::string& node, const std::string& text, double startup_s);

}  // namespace cc
