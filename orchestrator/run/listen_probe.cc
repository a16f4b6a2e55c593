#include "orchestrator/run/listen_probe.h"

#include <chrono>
#include <cmath>

#include "orchestrator/transport/agent_wait.h"

namespace cc {

Json StartListening(ListeningPeer& p, Clock& clock, const std::string& command, const Json& args,
                    double timeout_s) {
  Deadline d = Deadline::InSeconds(clock, timeout_s);
  auto id = p.state->agent->Send(command, args, d);
  if (!id.ok()) {
    p.listen = id.status();
    return Json();
  }
  p.id = *id;
  std::vector<Json> got;
  p.listen = WaitForResult(*p.state->agent, p.id, "listening", d, false, &got);
  return p.listen.ok() ? got.at(0) : Json();
}

ProbeReply AskToProbe(ListeningPeer& p, const Json& args, Deadline deadline, double grace_s) {
  ProbeReply r;
  AgentChannel& agent = *p.state->agent;
  Clock& clock = deadline.clock();
  const Clock::time_point start = clock.Now();
  r.status = agent.SendControl(p.id, "probe", args, deadline);
  r.send_ms = std::round(std::chrono::duration<double, std::milli>(clock.Now() - start).count());
  if (!r.status.ok()) return r;
  r.status = WaitForResult(agent, p.id, "probes", deadline, true, &r.probes, &r.last);
  if (r.status.Is(ErrorKind::kTimeout) && grace_s > 0) {
    r.status = WaitForResult(agent, p.id, "probes", Deadline::InSeconds(clock, grace_s), true,
                             &r.probes, &r.last);
  }
  return r;
}

void SendStop(ListeningPeer& p, Clock& clock, double timeout_s) {
  if (p.id < 0) return;
  p.stop = p.state->agent->SendControl(p.id, "stop", Json::object(),
                                       Deadline::InSeconds(clock, timeout_s));
}

void AwaitStopped(ListeningPeer& p, Clock& clock, double timeout_s) {
  if (p.id < 0 || !p.stop.ok()) return;
  std::vector<Json> unused;
  Status got = WaitForResult(*p.state->agent, p.id, "stopped",
                             Deadline::InSeconds(clock, timeout_s), false, &unused);
  // The `end` follows "stopped"; a listener failure ends with an error.
  p.stop =
      got.ok() ? WaitForEnd(*p.state->agent, p.id, Deadline::InSeconds(clock, timeout_s)) : got;
}

std::string StopNotConfirmed(const ListeningPeer& p) {
  return "stop not confirmed (" + p.stop.ToString() +
         "): its listeners close when the agent exits at the end of the run";
}

}  // namespace cc
