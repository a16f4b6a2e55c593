// Analysis across stages: pure functions from a stored run (and optionally
// a baseline run) to verdicts an operator acts on (docs/architecture.md
// "Data flow"). Each verdict names the node or link, carries its evidence
// and a next step.
//
// Causes first (causes.h). A stage that establishes a fault of a node or
// a link records it as a cause (verdict.h CauseScope, StageContext::
// RecordCause), in these kinds, with its fix as next step:
//   address-missing | wrong-prefix | wrong-subnet | duplicate-address |
//   link-down | mtu     nics: the node's interface on the chosen network
//   port-blocked | bad-node | wrong-host | node-lost (node), bad-link |
//   one-way (link)      ports: the node's firewall, routing or link, or
//                       one link's filter
//   unhealthy           health: a node to reboot or drain
// A cause leads the list; the pair rules do not see the pairs of its
// scope; every other verdict that only causes explain is counted inside
// the cause (Verdict::explains), and a later stage's cause an earlier
// one explains is one of its symptoms. The run's headline names only the
// nodes that carry a cause (reports/terminal.h VerdictLine).
//
// Kinds, and the rule behind each:
//   unreachable | auth-failed | host-key   connect stage failures, by reason
//   hang          any hang outcome (connect, a node check or a pair), named
//   bad-node      in a pair check, a node fails with every (or nearly every)
//                 partner while those partners pass with others
//   port-blocked  a bad node of the ports stage that fails only as the
//                 receiver: its firewall filters that port from every peer;
//                 also a port that fails on most pairs of the cluster
//   bad-link      one pair fails (both ways where both were tested) while
//                 both ends pass with others
//   one-way       A->B fails while B->A passes (ports: B's firewall)
//   widespread    a stage's failures are spread evenly over most nodes (or
//                 most pairs fail) and no node or link explains them
//                 (widespread.h): one verdict per stage with counts, the
//                 share of pairs and examples, not a verdict per pair
//   flaky         (warn) a result whose retest disagreed (confirm.h): the
//                 pair, or the node in most flaky pairs, or the stage when
//                 they are spread evenly, with both attempts; flaky
//                 results never make a bad node or link
//   bandwidth-outlier  a pair's value below outlier_fraction of the check's
//                 median, below min_busbw_gbps, or below baseline_fraction
//                 of the same pair in a baseline run
//   odd-version   parity: a node differs from the cluster majority, one
//                 verdict per field
//   incompatible  parity: a compatibility rule fails (driver too old for
//                 the CUDA torch/NCCL need, GPUs missing, memlock, /dev/shm)
//   pin-mismatch  parity: a value does not match the inventory's [expect]
//   node-fail     other failing node checks (nics link down, intra-node
//                 NCCL, ...), alike nodes folded
//   untested      checks that ended in `error` (could not be tested)
//   unhealthy     health: a node's hardware finding, its evidence naming
//                 the action (reset-gpu, reboot, drain, investigate). A
//                 verdict whose action is reboot or drain is a node cause
//                 (above)
//
// A failure whose retest could not run ("unconfirmed") is still named,
// and its verdict's summary says "not confirmed" and why. A verdict's
// next step follows its cause: a result's own evidence["next_step"], or
// what its evidence names (verdict_next_step.h: the MTU to set on an interface,
// the port to open on a chain), before the stage's generic advice.
//   wrong-host, in-use, ...   kinds only a stage's own attribution knows
//
// A stage that attributes its own pair failures records them as verdicts
// in the kinds above (RunData::verdicts; the ports and nccl stages do).
// They are taken as they are, and the pair rules are not run again for
// that stage (its bandwidth and hangs still are).
//
// Pure: no I/O; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/median.h"
#include "common/outcome.h"
#include "orchestrator/store/run_data.h"
#include "orchestrator/store/verdict.h"

namespace cc {

struct AnalysisOptions {
  // A pair whose value is below this fraction of its check's median is a
  // bandwidth outlier. Default 0.8. REQUIRES: 0 < outlier_fraction <= 1.
  double outlier_fraction = 0.8;
  // A floor in GB/s for values with unit "GB/s"; 0 = none.
  double min_busbw_gbps = 0;
  // An earlier run of the same cluster to compare values with; nullptr =
  // none. Not owned; must outlive the call.
  const RunData* baseline = nullptr;
  // A pair below this fraction of its baseline value is an outlier.
  double baseline_fraction = 0.9;
  // A node is bad when it fails with at least this fraction of its
  // partners (and with at least two of them).
  double bad_node_fraction = 0.8;
};

// All verdicts of a run, worst first: by severity, then kind (connect
// problems and bad nodes before links, versions last), then first node.
// A pair explained by a bad node or a hang is not repeated as a link.
std::vector<Verdict> Analyze(const RunData& data, const AnalysisOptions& options = {});

}  // namespace cc
