#include "orchestrator/stages/ports/node_lost.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace cc {

bool MeansNodeLost(const Status& s) {
  switch (s.kind()) {
    case ErrorKind::kTimeout:
    case ErrorKind::kEof:
    case ErrorKind::kIo:
    case ErrorKind::kUnreachable:
      return true;
    default:
      return false;
  }
}

bool HiddenByLoss(const std::string& src, const std::string& dst, Outcome o,
                  const std::string& state, const std::set<std::string>& lost) {
  if (o == Outcome::kPass || state == "in-use") return false;
  return lost.count(src) > 0 || lost.count(dst) > 0;
}

PortVerdict NodeLostVerdict(const LostNode& lost, const std::vector<PortCell>& before) {
  std::map<std::string, int> sent, received;
  std::set<std::string> peers;
  for (const PortCell& c : before) {
    if (c.src == lost.node) {
      ++sent[c.state];
      peers.insert(c.dst);
    } else if (c.dst == lost.node) {
      ++received[c.state];
      peers.insert(c.src);
    }
  }
  auto total = [](const std::map<std::string, int>& m) {
    int n = 0;
    for (const auto& [state, count] : m) n += count;
    return n;
  };
  char when[96];
  std::snprintf(when, sizeof when, "between %.1f s and %.1f s", lost.alive_ms / 1000,
                lost.after_ms / 1000);
  PortVerdict v;
  int measured = total(sent) + total(received);
  const std::string before_that =
      measured == 0 ? std::string("Nothing was measured with it before")
                    : "Before that, " + std::to_string(measured) + " probes with " +
                          std::to_string(peers.size()) + " peers were measured";
  v.nodes = {lost.node};
  if (lost.answered_again) {
    v.kind = "contact-lost";
    v.severity = Outcome::kWarn;
    v.message = "the controller lost contact with " + lost.node +
                "'s agent during the ports stage (" + lost.phase + ", " + when +
                " after the stage started: " + lost.reason +
                "), but a fresh connection to it answered at the end of the stage: the node is "
                "up, and stays in the run. " +
                before_that + "; its other probes are not judged";
    v.next_step =
        "run the ports stage again; should contact be lost again, look at this machine's load "
        "during the run (a controller too loaded to keep its deadlines cuts its own sessions) "
        "and at " +
        lost.node + "'s sshd log";
  } else {
    v.kind = "node-lost";
    v.severity = Outcome::kFail;
    v.message = lost.node + " was lost during the ports stage (" + lost.phase + ", " + when +
                " after the stage started): its agent stopped answering (" + lost.reason + ")" +
                (lost.asked_again ? ", and a fresh connection to it failed too (" + lost.again + ")"
                 : lost.again.empty() ? std::string()
                                      : " (not asked again: " + lost.again + ")") +
                ". " + before_that + "; its other probes are not judged";
    v.next_step = "check that " + lost.node +
                  " is up and its links are up (ping it, ip link, the console, dmesg), then run "
                  "the ports stage again";
  }
  v.evidence = {{"lost_in", lost.phase},
                {"alive_at_ms", std::round(lost.alive_ms)},
                {"lost_after_ms", std::round(lost.after_ms)},
                {"reason", lost.reason},
                {"asked_again", lost.asked_again
                                    ? nlohmann::json(lost.answered_again ? "answered" : lost.again)
                                    : nlohmann::json(nullptr)},
                {"measured_before",
                 {{"as_sender", sent},
                  {"as_receiver", received},
                  {"probes", measured},
                  {"peers", peers.size()}}}};
  return v;
}

}  // namespace cc
