// clustercheck's own shell snippets on a node (the push's probe, the upload
// over a command channel), run so that a talking login shell cannot be
// mistaken for their output: the script is framed (common/shell_frame.h),
// only what lies between the markers is returned, and what the shell printed
// around them is kept apart for the node's notice.
#pragma once

#include <string>
#include <string_view>

#include "common/deadline.h"
#include "common/status.h"
#include "orchestrator/transport/transport.h"

namespace cc {

struct FramedRun {
  std::string output;       // what the script printed, exactly
  std::string shell_noise;  // what the shell printed around it; "" if quiet
  // From Start until the begin marker arrived: channel setup plus the user's
  // shell startup files, which every later command on the node pays again.
  double startup_s = 0;
};

// Runs `script` with `sh -c` under the user's shell, writes `input` to its
// stdin and closes it, and reads to the end.
// Errors: Start's; kTimeout at the deadline (the process is killed); kIo for
// a non-zero exit (naming the code, with stderr's tail); kProtocol when it
// exited 0 but the end marker never came.
Result<FramedRun> RunFramed(Connection& c, const std::string& script, Deadline deadline,
                            std::string_view input = {});

}  // namespace cc
