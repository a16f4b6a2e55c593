// Judging one mpirun of clustercheck-mpi-probe: who Open MPI's own messages
// name (a node whose interface setting is wrong, whose ssh refused, that
// lacks the probe, a link whose TCP connect failed) and the stage's results
// per node and per pair. Pure: text and parsed lines in, results out.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "orchestrator/run/schedule.h"
#include "orchestrator/stages/mpi/mpi_output.h"
#include "orchestrator/store/store.h"

namespace cc {

// What one Open MPI message (a help block between dashed lines, or an ssh
// error line) says went wrong, and whom it names.
struct MpiBlame {
  std::string kind;                // "bad-if", "unreachable", "no-executable",
                                   // "tcp-connect", "ssh", "daemon"
  std::vector<std::string> nodes;  // inventory names; empty: none named
  std::string peer;                // tcp-connect: the node it could not reach
  std::string message;             // for people, Open MPI's words quoted
};

// `lines`: mpirun's lines that are not the probe's (MpiProbeOutput::other
// and stderr). `aliases` maps every name a node goes by in Open MPI's
// messages (inventory name, address, the hello's host name) to its
// inventory name. Blames of one kind and setting are merged across nodes.
std::vector<MpiBlame> AttributeMpiMessages(const std::vector<std::string>& lines,
                                           const std::map<std::string, std::string>& aliases);

struct MpiRunJudgement {
  std::vector<NodeResult> nodes;  // per node: "launch", "allreduce"
  std::vector<PairResult> pairs;  // per pair: "latency" (us), "bandwidth" (GB/s)
};

struct MpiRunFacts {
  std::vector<std::string> nodes;  // in rank order
  MpiProbeOutput output;
  std::vector<MpiBlame> blames;
  bool hung = false;  // mpirun was killed at a deadline
  // Killed at its overall cap while still printing (not a hang: its
  // missing pairs are not reached, none is a suspect).
  bool cap_stop = false;
  std::string stop_why;  // DecideMpirunStop's words; "" = the old fixed deadline
  int exit_code = 0;
  double timeout_s = 0;
  // The probe's pairs by rank ("0", "3"), when it was given some (--pairs:
  // a burn-in round's); empty: every round-robin round of the ranks.
  std::vector<Round> rounds;
};

// Every node gets "launch" and "allreduce", every round-robin pair
// "latency" and "bandwidth": pass with the figures, fail with the probe's
// reason, or (nothing reported) hang when mpirun was killed at its
// deadline, else fail naming the blamed nodes and quoting Open MPI. When
// every rank started and its allreduce came before mpirun was killed, only
// the missing pairs of the first unfinished round are `hang` suspects, and
// only after an idle stop (a cap stop has none: it was still working); the
// pairs the job never reached are `error`, state "not-reached" ("not
// reached: the job was stopped at its deadline after round R of T").
MpiRunJudgement JudgeMpiRun(const MpiRunFacts& facts);

// JudgeMpiRun a slice of rounds at a time, so that a large run never holds
// all its pair results at once (at 256 nodes there are 65,280, about 1 KB
// each with their evidence): JudgeMpiRun(f) is {Nodes(), Pairs(0, rounds())}.
// Keeps a reference to `facts`, which must outlive it unchanged.
class MpiPairJudge {
 public:
  explicit MpiPairJudge(const MpiRunFacts& facts);
  ~MpiPairJudge();
  MpiPairJudge(const MpiPairJudge&) = delete;
  MpiPairJudge& operator=(const MpiPairJudge&) = delete;

  size_t rounds() const;
  // How many pair results Pairs(0, rounds()) has: two per pair.
  size_t results() const;
  std::vector<NodeResult> Nodes() const;
  // The results of the pairs of rounds [begin, end), in round order, each
  // pair's latency then its bandwidth.
  std::vector<PairResult> Pairs(size_t begin, size_t end) const;
  // The index-th result of Pairs(0, rounds()); kError naming the index when
  // there is none such.
  PairResult At(size_t index) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace cc
