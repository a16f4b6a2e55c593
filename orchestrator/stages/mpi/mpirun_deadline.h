// When to stop an mpirun job (issue 17): a job that keeps printing results
// is working, however long it takes; a hang is a job that prints nothing
// new for a while. So a job has two deadlines: an idle one, reset by every
// line mpirun prints, and an overall cap that grows with the job's size.
// Pure.
#pragma once

#include <string>

namespace cc {

struct MpirunDeadlines {
  double idle_s = 0;    // no new line for this long: the job is hung
  double total_s = 0;   // stopped here however steady its progress
  std::string cap_why;  // how total_s was derived, for people
};

// Both deadlines `timeout_s`: a job whose length does not grow with the
// number of nodes (one rank alone, one pair, one NCCL group's sizes).
MpirunDeadlines FixedMpirunDeadlines(double timeout_s);

// The mpi probe's job over `ranks` ranks in round-robin rounds. Idle:
// `timeout_s` (the launch, and any gap between two results, must fit in
// it). Cap: timeout_s + (rounds + 2) * pair_timeout_s: the probe bounds
// each round by its own pair deadline (round r must end by
// t0 + (r + 2) * pair_timeout_s, mpi_probe.cc; the 2 are the allreduce
// and the ranks' skew), so a job that honours its own deadlines ends
// within the launch's allowance plus that; past it, something is wrong
// even though lines still come.
MpirunDeadlines MpiJobDeadlines(int ranks, double timeout_s, double pair_timeout_s);

// Rounds of the round-robin schedule over `ranks` (circle method: n-1 for
// even n, n for odd n; 0 for fewer than 2).
int MpiRoundCount(int ranks);

enum class MpirunStop { kKeepGoing, kIdle, kCap };

struct MpirunDecision {
  MpirunStop stop = MpirunStop::kKeepGoing;
  std::string why;  // "" when kKeepGoing
};

// `elapsed_s` since the start, `since_line_s` since the last line (or the
// start, when none came yet).
MpirunDecision DecideMpirunStop(const MpirunDeadlines& d, double elapsed_s, double since_line_s);

}  // namespace cc
