#include "orchestrator/stages/mpi/mpi_confirm.h"

#include "orchestrator/run/confirm_node.h"

namespace cc {
namespace {

const NodeResult* FindNode(const std::vector<NodeResult>& rs, const NodeResult& r) {
  for (const NodeResult& x : rs) {
    if (x.node == r.node && x.check == r.check) return &x;
  }
  return nullptr;
}

const PairResult* FindPair(const std::vector<PairResult>& rs, const PairResult& r) {
  for (const PairResult& x : rs) {
    if (x.check != r.check) continue;
    if ((x.src == r.src && x.dst == r.dst) || (x.src == r.dst && x.dst == r.src)) return &x;
  }
  return nullptr;
}

// What stands in for a retest that has no such result.
template <typename R>
R Missing(const R& first) {
  R r = first;
  r.outcome = Outcome::kError;
  r.message = "not in the retest";
  r.evidence = nlohmann::json::object();
  return r;
}

// An `error` of the first job (a rank that did not start, a test not run
// because of it) is retested too: the launch failed, and whether it fails
// again is what tells a broken node from a hiccup.
bool Retested(Outcome o) { return NeedsConfirmation(o) || o == Outcome::kError; }

// Confirm() keeps the first attempt when the retest could not test (error).
// Here the retest knows more: it ran with isolation, so its `error` says
// which node's launch kept this one from being tested. It stands, with the
// merge's record of both attempts (unconfirmed).
template <typename R>
R Merged(const R& first, const R& second, const R& confirmed) {
  if (second.outcome != Outcome::kError) return confirmed;
  R r = second;
  r.evidence["attempts"] = confirmed.evidence["attempts"];
  r.evidence["confirmation"] = confirmed.evidence["confirmation"];
  return r;
}

// A pair the first job never reached (it was stopped before its round,
// mpi_verdict.h) was not tested: the retest is its first measurement, so
// a pass there is a plain pass (not "flaky"), and a failure there is an
// accusation on one attempt, which stands unconfirmed.
constexpr const char* kNotReached = "not-reached";
// Nor was a pair whose line the first job never wrote before it ended
// (mpi_verdict.cc: "unreported"): its retest is its first measurement too.
constexpr const char* kUnreported = "unreported";

PairResult FirstMeasurement(const PairResult& first, const PairResult& retest,
                            RetestCounts* counts) {
  PairResult r = retest;
  r.evidence["attempts"] = {
      {{"outcome", OutcomeName(first.outcome)}, {"state", first.state}, {"message", first.message}},
      {{"outcome", OutcomeName(retest.outcome)},
       {"state", retest.state},
       {"message", retest.message}}};
  if (NeedsConfirmation(retest.outcome) || retest.outcome == Outcome::kError) {
    r.evidence["confirmation"] = kUnconfirmed;
    counts->Add(r);
  }
  return r;
}

}  // namespace

bool MpiNeedsConfirmation(const MpiRunJudgement& j) {
  for (const NodeResult& r : j.nodes) {
    if (Retested(r.outcome)) return true;
  }
  for (const PairResult& r : j.pairs) {
    if (Retested(r.outcome)) return true;
  }
  return false;
}

MpiRunJudgement MergeMpiAttempts(const MpiRunJudgement& first, const MpiRunJudgement& second,
                                 RetestCounts* counts) {
  MpiRunJudgement out = first;
  for (NodeResult& r : out.nodes) {
    if (!Retested(r.outcome)) continue;
    const NodeResult* again = FindNode(second.nodes, r);
    r = again ? Merged(r, *again, ConfirmNode(r, *again)) : ConfirmNode(r, Missing(r));
    AddNodeRetest(r, counts);
  }
  for (PairResult& r : out.pairs) {
    if (!Retested(r.outcome)) continue;
    const PairResult* again = FindPair(second.pairs, r);
    PairResult retest = again ? *again : Missing(r);
    retest.src = r.src;  // the same pair, named as the first attempt named it
    retest.dst = r.dst;
    if ((r.state == kNotReached || r.state == kUnreported) && again) {
      r = FirstMeasurement(r, retest, counts);
      continue;
    }
    r = again ? Merged(r, retest, Confirm(r, retest)) : Confirm(r, retest);
    counts->Add(r);
  }
  return out;
}

}  // namespace cc
