// Which nodes and links later stages leave out, and why: the causes the
// earlier stages of a run established (verdict.h CauseScope). A node with
// a node-level cause is not put into a cluster-wide job (the mpi stage's
// mpirun, the nccl stage's cluster and group tests) and its pairs are
// skipped with the reason, so that the rest of the cluster is measured
// and one broken node costs about what a healthy run costs. A link-level
// cause (a one-way filter) leaves its pair out of the pair tests; a job
// with both ends that fails is run once more without one of them.
// Pure bookkeeping. Not thread-safe: StageContext guards it.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "orchestrator/store/store.h"
#include "orchestrator/store/verdict.h"

namespace cc {

class Containment {
 public:
  // Takes a cause's scope. A verdict that is no cause is ignored.
  void Add(const Verdict& cause);

  bool empty() const { return nodes_.empty() && links_.empty(); }
  // Why `node` is left out ("node4: eth0 is down (nics link-down)"); ""
  // when it is not.
  std::string WhyNode(const std::string& node) const;
  // Why the pair a-b (either way round) is not tested: its node's or its
  // link's cause; "" when it is tested.
  std::string WhyPair(const std::string& a, const std::string& b) const;
  // `nodes` without the contained ones, in their order.
  std::vector<std::string> Remaining(const std::vector<std::string>& nodes) const;
  // The contained nodes among `nodes`, in their order.
  std::vector<std::string> Contained(const std::vector<std::string>& nodes) const;
  // The link-level causes whose both ends are among `nodes`.
  std::vector<std::pair<std::string, std::string>> LinksAmong(
      const std::vector<std::string>& nodes) const;
  // The nodes of a cluster-wide job among `nodes` (in their order): no
  // node with a cause, and of each caused link only its first end (the
  // sender of a one-way filter: the receiver's firewall drops it), so that
  // no job is started that a known cause would fail. Each node left out is
  // added to `*left_out` with why.
  std::vector<std::string> JobNodes(const std::vector<std::string>& nodes,
                                    std::map<std::string, std::string>* left_out) const;

 private:
  std::map<std::string, std::string> nodes_;                          // node -> why
  std::map<std::pair<std::string, std::string>, std::string> links_;  // (min, max) -> why
  // (min, max) -> the receiving end of the link's first failing direction
  std::map<std::pair<std::string, std::string>, std::string> second_end_;
};

// "not tested: <why>": the message of a result a cause kept from a test.
std::string NotTestedBecause(const std::string& why);

// The value (and a pair result's state) of a result containment skipped:
// analysis reads it to say what the rest of the cluster did without the
// cause (causes.h).
inline constexpr const char* kContainedValue = "contained";

// What a stage records for the nodes containment kept out of its job
// (`left_out`: node -> why, as JobNodes gives it): per node and check in
// `node_checks` a `skip` node result, and per pair of such a node with a
// node of `job` and check in `pair_checks` a `skip` pair result (the left
// out node as src), each "not tested: <why>", value (node) or state (pair)
// kContainedValue, with evidence {"contained": why}.
struct ContainedSkips {
  std::vector<NodeResult> nodes;
  std::vector<PairResult> pairs;
};
ContainedSkips ContainedResults(const std::string& stage,
                                const std::map<std::string, std::string>& left_out,
                                const std::vector<std::string>& job,
                                const std::vector<std::string>& node_checks,
                                const std::vector<std::string>& pair_checks);

}  // namespace cc
