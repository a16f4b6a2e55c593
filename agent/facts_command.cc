// Placeholder: replaced by the facts collectors.
#include "agent/commands_decl.h"
namespace cc::agent {
Status RunFacts(const Json&, CommandContext& ctx) {
  ctx.Result("facts", Json::object());
  return Status::Ok();
}
}  // namespace cc::agent
