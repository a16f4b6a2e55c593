// A node lost in the middle of the ports stage: it crashed, or lost its
// links, after it had started listening. Its agent stops answering the
// controller, every probe to it times out, and every probe it had not
// reported is missing. Judged one probe at a time, that is one "bad node"
// per port and "hang"s naming every sender; it is one fact: the node went
// away at a known moment. So it is ONE verdict, kind `node-lost`, naming
// the node, when it was lost, and what was measured with it before; its
// probes that did not pass are stored as `skip` (state "node-lost") and
// judged by nothing else.
//
// How it is seen (ports_stage.cc): the node's agent fails to take or to
// answer a control line of the probe phase, the retests or the stop (a
// timeout, or the channel closed). An agent that answers, even when every
// probe fails (a firewall that isolates the node), is not lost.
//
// Pure: no I/O; thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "common/status.h"
#include "orchestrator/stages/ports/ports_verdict.h"

namespace cc {

// The state stored for a probe a lost node leaves without a verdict.
inline constexpr const char* kNodeLostState = "node-lost";

struct LostNode {
  std::string node;
  std::string phase;    // "probe batch 2 of 3", "retests", "stop"
  double alive_ms = 0;  // since the stage started: the phase began, the
                        // node still answering
  double after_ms = 0;  // since the stage started: the loss was noticed
  std::string reason;   // the failure that showed it ("timeout: ...")
  // The confirmation: whether a fresh connection was tried, and whether
  // the node's agent answered on it; `again` is its failure, or what
  // could not try.
  bool asked_again = false;
  bool answered_again = false;
  std::string again;
};

// True when a failure of the agent channel means the node is gone
// (timeout, closed stream, I/O, unreachable), false when the agent
// answered with an error of its own (protocol, bad argument, internal).
bool MeansNodeLost(const Status& s);

// True when a probe between src and dst with outcome `o` and stored state
// `state` says nothing about ports once `lost` holds one of them: anything
// but a pass (measured before the loss) or an "in-use" (a foreign holder
// found before the loss). A warn such as "connected, but no token came
// back" is what a link going down mid-connection looks like.
bool HiddenByLoss(const std::string& src, const std::string& dst, Outcome o,
                  const std::string& state, const std::set<std::string>& lost);

// The one verdict for `lost`: `fail` node-lost, or `warn` contact-lost
// when it answered again. `before` are the probes with the node as
// sender or receiver that were measured (not hidden) before it was lost.
PortVerdict NodeLostVerdict(const LostNode& lost, const std::vector<PortCell>& before);

}  // namespace cc
