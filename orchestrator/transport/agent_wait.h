// Waiting on one request of a phased agent command (`ports`, `nics`): the
// next result of a given name, or the request's end. Shared by the pair
// stages.
#pragma once

#include <string>
#include <vector>

#include "orchestrator/transport/agent_channel.h"

namespace cc {

// Reads messages of request `id` until result `name` (more chunks while
// `chunked` and data.last is false: their data.probes are appended to
// *out and *last gets the final chunk's other fields; unchunked, the data
// itself is appended). An `end` first is kInternal carrying the agent's
// reason; kTimeout at the deadline.
Status WaitForResult(AgentChannel& ch, int64_t id, const std::string& name, Deadline deadline,
                     bool chunked, std::vector<Json>* out, Json* last = nullptr);

// Reads until request `id` ends: ok for an `end` with ok=true, kInternal
// with the agent's error otherwise.
Status WaitForEnd(AgentChannel& ch, int64_t id, Deadline deadline);

}  // namespace cc
