// Declarations of the functions in the command table (commands.cc).
#pragma once

#include "agent/command.h"

namespace cc::agent {

Status RunFacts(const Json& args, CommandContext& ctx);
Status RunSleep(const Json& args, CommandContext& ctx);
Status RunPorts(const Json& args, CommandContext& ctx);
Status RunNics(const Json& args, CommandContext& ctx);
Status RunNccl(const Json& args, CommandContext& ctx);
Status RunNcclId(const Json& args, CommandContext& ctx);
Status RunHealth(const Json& args, CommandContext& ctx);

}  // namespace cc::agent
