#include "orchestrator/stages/mpi/mpirun_deadline.h"

#include <cmath>

namespace cc {
namespace {

std::string Seconds(double s) {
  return std::to_string(static_cast<long long>(std::lround(s))) + " s";
}

}  // namespace

MpirunDeadlines FixedMpirunDeadlines(double timeout_s) {
  return {timeout_s, timeout_s, "a fixed deadline of " + Seconds(timeout_s)};
}

int MpiRoundCount(int ranks) {
  if (ranks < 2) return 0;
  return ranks % 2 == 0 ? ranks - 1 : ranks;
}

MpirunDeadlines MpiJobDeadlines(int ranks, double timeout_s, double pair_timeout_s) {
  const int rounds = MpiRoundCount(ranks);
  MpirunDeadlines d;
  d.idle_s = timeout_s;
  d.total_s = timeout_s + (rounds + 2) * pair_timeout_s;
  d.cap_why = Seconds(timeout_s) + " + (" + std::to_string(rounds) + " rounds + 2) x " +
              Seconds(pair_timeout_s);
  return d;
}

MpirunDecision DecideMpirunStop(const MpirunDeadlines& d, double elapsed_s, double since_line_s) {
  if (since_line_s >= d.idle_s) {
    return {MpirunStop::kIdle, "no new line from mpirun for " + Seconds(since_line_s) +
                                   " (its idle deadline is " + Seconds(d.idle_s) + ")"};
  }
  if (elapsed_s >= d.total_s) {
    return {MpirunStop::kCap, "mpirun was still printing at its overall cap of " +
                                  Seconds(d.total_s) + " (" + d.cap_why + ")"};
  }
  return {};
}

}  // namespace cc
