// The controller's own resource use, for bench/scale.sh (issue 14): peak
// RSS and CPU of this process alone. /usr/bin/time reports the largest
// process of the tree it waits for, and the mpi stage's mpirun is in that
// tree, so its figure was mpirun's, not ours.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cc {

struct SelfUsage {
  long max_rss_kb = 0;  // the whole run's peak, every segment's included
  double user_s = 0;    // all threads of this process, no children
  double sys_s = 0;
  // Each segment's own peak, in the order they ended (EndSelfUsageSegment).
  std::vector<std::pair<std::string, long>> segment_peak_kb;
};

SelfUsage ReadSelfUsage();

// "max_rss_kb=N user_s=X sys_s=Y[ peak_kb.SEGMENT=N ...]\n", the line
// WriteSelfUsageIfAsked writes.
std::string FormatSelfUsage(const SelfUsage& u);

// Only when CLUSTERCHECK_SELF_USAGE is set: the peak RSS since the last
// segment ended is recorded as `name`'s, and the kernel's high-water mark
// is reset (/proc/self/clear_refs "5") so that the next segment's peak is
// its own. Which stage holds the peak is what says where memory must go
// next (issue 14). ReadSelfUsage's max_rss_kb stays the whole run's.
void EndSelfUsageSegment(const std::string& name);

// Writes FormatSelfUsage(ReadSelfUsage()) to the file named by the
// environment variable CLUSTERCHECK_SELF_USAGE, when it is set; does
// nothing otherwise. Errors are ignored: a benchmark's figure must not
// change the run's exit code.
void WriteSelfUsageIfAsked();

}  // namespace cc
