// Confirmation of the ports stage (confirm.h applied to port probes): which
// failed probes are tested again, in which quiet rounds, and when retesting
// a symptom stops adding anything.
//
// Every fail/hang probe is retested after the burst, one pair at a time per
// node (QuietRounds), all ports of that pair in one burst, with a longer
// deadline. The cost is bounded: one fault produces many failing probes of
// the same symptom (node3's INPUT drops tcp/29500: 15 senders fail;
// node1's OUTPUT drops everything: 15 receivers fail), and a whole node
// down would take n-1 quiet rounds of full deadlines. So a symptom — a
// receiver that fails a port, or a sender that fails a port — is retested
// until kConfirmationsPerSymptom retests confirmed it; its other probes
// keep their first attempt, marked unconfirmed with the reason. A confirmed
// retest counts for the receiver's symptom only when the sender reached
// that port elsewhere on its first attempt (else the sender may be the
// cause), and for the sender's symptom only when others reached the
// receiver's port: node1's failures to three receivers that drop
// tcp/29500 say nothing about node1. The stage also stops retesting when
// its time budget is spent.
//
// Pure: no I/O; thread-compatible.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "common/outcome.h"
#include "orchestrator/stages/ports/ports_plan.h"
#include "orchestrator/store/store.h"

namespace cc {

inline constexpr int kConfirmationsPerSymptom = 3;
// How many pairs of one retest round a node in several failing pairs may
// be in: enough to confirm its receiving and its sending symptom at once.
inline constexpr size_t kPatternShare = 2 * kConfirmationsPerSymptom;

// evidence["confirmation"] of a probe whose first attempt only timed out
// waiting for the token and whose retest passed (see ConfirmPortProbe).
inline constexpr const char* kCleared = "cleared";

// True for a probe that connected but whose token did not come back in
// time (JudgeProbe's only `open` + warn): on a loaded node the listener was
// slow to answer, which says nothing about the path yet.
bool IsTokenTimeout(const PairResult& r);

// What the ports stage retests: every fail/hang (NeedsConfirmation) and
// every token timeout. Indices into `results`, in order.
std::vector<size_t> PortsToRetest(const std::vector<PairResult>& results);

// Confirm() for port probes. A first attempt that was a token timeout is
// merged differently: the TCP connect succeeded, so the path worked; only
// our listener was slow to write a few bytes back. When the quiet retest
// (2.5x deadline) passes, that was load on the node, not a link that works
// only sometimes, so the result is `pass`, with both attempts in evidence
// and evidence["confirmation"] = "cleared" (not `flaky`, which would be a
// warn and break "a healthy cluster has zero warns"). A token timeout
// again is the listener's real slowness: it stays `warn`, confirmed. A
// retest that fails or hangs after a connect that succeeded is `flaky`
// (worked once, failed once). A retest that could not run leaves the
// first attempt, unconfirmed. Every other first attempt goes to Confirm().
PairResult ConfirmPortProbe(const PairResult& first, const PairResult& second);

class SymptomBudget {
 public:
  // `first` holds the first attempt's outcome of every plan entry.
  SymptomBudget(const std::vector<PlannedProbe>& plan, const std::vector<Outcome>& first,
                int confirmations = kConfirmationsPerSymptom);
  // An empty budget, told the first attempts one at a time (FirstAttempt):
  // the ports stage holds no plan of PlannedProbes to hand over.
  explicit SymptomBudget(int confirmations = kConfirmationsPerSymptom)
      : confirmations_(confirmations) {}
  // p's first attempt ended `o`: a pass or warn says its ports worked.
  void FirstAttempt(const PlannedProbe& p, Outcome o);

  // True when p's symptom (its receiver's port, or its sender's port) was
  // confirmed often enough: retesting p adds nothing.
  bool ConfirmedEnough(const PlannedProbe& p) const;
  // ConfirmedEnough, or the retests planned in this round would make it so.
  bool Covered(const PlannedProbe& p) const;
  // Counts a retest of p that confirmed its failure (see above for which
  // symptom it counts for).
  void Confirmed(const PlannedProbe& p);
  // Counts a retest of p that is in the round being planned, so that a
  // round that holds several pairs of one node (kPatternShare) plans no
  // more retests of a symptom than would confirm it; EndRound forgets them
  // (the confirmations that came back count instead).
  void Planned(const PlannedProbe& p);
  void EndRound() { planned_.clear(); }

 private:
  // (node, direction, port): direction 'i' for a receiver, 'o' for a
  // sender; every ephemeral port counts as port 0 (the samples differ per
  // receiver, the symptom is the same range).
  using Key = std::tuple<std::string, char, int>;
  static int PortKey(const PlannedProbe& p) { return p.kind == PortKind::kEphemeral ? 0 : p.port; }
  static Key In(const PlannedProbe& p) { return {p.dst, 'i', PortKey(p)}; }
  static Key Out(const PlannedProbe& p) { return {p.src, 'o', PortKey(p)}; }
  static int Count(const std::map<Key, int>& m, const Key& k);
  void Count(const PlannedProbe& p, std::map<Key, int>& into) const;
  int confirmations_;
  std::map<Key, int> worked_;  // first-attempt passes per symptom key
  std::map<Key, int> confirmed_;
  std::map<Key, int> planned_;  // this round's retests, not back yet
};

// The retest rounds for plan indices `failed` (plan[i] are their probes):
// the distinct (src, dst) pairs in first-failure order, split by
// QuietRounds (a node in several failing pairs in up to kPatternShare
// pairs of a round), each pair with its failed plan indices.
struct RetestPair {
  std::string src, dst;
  std::vector<size_t> probes;  // plan indices
};
std::vector<std::vector<RetestPair>> RetestRounds(const std::vector<PlannedProbe>& plan,
                                                  const std::vector<size_t>& failed);
// The same, with each failed index's (src, dst) given by `pair_of`.
std::vector<std::vector<RetestPair>> RetestRounds(
    const std::function<std::pair<std::string, std::string>(size_t)>& pair_of,
    const std::vector<size_t>& failed);

}  // namespace cc
