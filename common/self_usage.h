// The controller's own resource use, for bench/scale.sh (issue 14): peak
// RSS and CPU of this process alone. /usr/bin/time reports the largest
// process of the tree it waits for, and the mpi stage's mpirun is in that
// tree, so its figure was mpirun's, not ours.
#pragma once

#include <string>

namespace cc {

struct SelfUsage {
  long max_rss_kb = 0;  // VmHWM: getrusage(RUSAGE_SELF).ru_maxrss
  double user_s = 0;    // all threads of this process, no children
  double sys_s = 0;
};

SelfUsage ReadSelfUsage();

// "max_rss_kb=N user_s=X sys_s=Y\n", the line WriteSelfUsageTo writes.
std::string FormatSelfUsage(const SelfUsage& u);

// Writes FormatSelfUsage(ReadSelfUsage()) to the file named by the
// environment variable CLUSTERCHECK_SELF_USAGE, when it is set; does
// nothing otherwise. Errors are ignored: a benchmark's figure must not
// change the run's exit code.
void WriteSelfUsageIfAsked();

}  // namespace cc
