// `sleep`: waits args.seconds or until stdin closes. Lets tests make an
// agent that hangs, to prove the controller's deadlines.
#include "agent/commands_decl.h"

namespace cc::agent {

Status RunSleep(const Json& args, CommandContext& ctx) {
  double seconds = args.value("seconds", 1.0);
  Deadline until = Deadline::InSeconds(seconds);
  while (!until.Passed()) {
    if (!ctx.NextControl(until)) break;  // EOF or deadline
  }
  return Status::Ok();
}

}  // namespace cc::agent
