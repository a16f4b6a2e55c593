#include "orchestrator/transport/agent_wait.h"

namespace cc {

Status WaitForResult(AgentChannel& ch, int64_t id, const std::string& name, Deadline deadline,
                     bool chunked, std::vector<Json>* out, Json* last) {
  for (;;) {
    auto msg = ch.Next(deadline);
    if (!msg.ok()) {
      if (msg.status().Is(ErrorKind::kTimeout)) {
        return Status::Timeout("no \"" + name + "\" from the agent within the deadline");
      }
      return msg.status();
    }
    const Json& m = *msg;
    if (m.value("id", int64_t{-2}) != id) continue;
    std::string type = m.value("type", "");
    if (type == "end") {
      std::string why = m.value("error", std::string("ended without \"" + name + "\""));
      return Status::Internal("agent: " + why);
    }
    if (type != "result" || m.value("name", "") != name) continue;
    Json data = m.value("data", Json());
    if (!chunked) {
      out->push_back(std::move(data));
      return Status::Ok();
    }
    for (Json& p : data.value("probes", Json::array())) out->push_back(std::move(p));
    if (data.value("last", false)) {
      if (last) {
        data.erase("probes");
        *last = std::move(data);
      }
      return Status::Ok();
    }
  }
}

Status WaitForEnd(AgentChannel& ch, int64_t id, Deadline deadline) {
  for (;;) {
    auto msg = ch.Next(deadline);
    if (!msg.ok()) return msg.status();
    if (msg->value("id", int64_t{-2}) == id && msg->value("type", "") == "end") {
      return msg->value("ok", false)
                 ? Status::Ok()
                 : Status::Internal("agent: " + msg->value("error", std::string("failed")));
    }
  }
}

}  // namespace cc
