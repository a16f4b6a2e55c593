// Collective bandwidth as nccl-tests defines it (NVIDIA/nccl-tests,
// doc/PERFORMANCE.md), so numbers compare with what operators already know.
// Shared by the agent (which measures) and the controller (which judges).
//
//   algbw = S / t                 S bytes per rank's buffer, t seconds per op
//   busbw = algbw * factor(n)     n ranks; the factor turns algbw into the
//                                 rate the slowest link must carry, which is
//                                 what compares with hardware peak:
//     AllReduce             2(n-1)/n
//     ReduceScatter,
//     AllGather             (n-1)/n   (S is the total size, as nccl-tests)
//     Broadcast, Reduce     1
//
// Units: GB/s with GB = 1e9 bytes, as nccl-tests prints them.
#pragma once

#include <cstdint>

namespace cc {

enum class Collective { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce };

// The busbw factor above. 0 for n < 1 (nothing moved); AllReduce with one
// rank gives 0, as nccl-tests prints for a single GPU.
double BusBandwidthFactor(Collective c, int nranks);

// bytes / seconds / 1e9; 0 when seconds <= 0 (not measured).
double AlgBandwidthGBps(uint64_t bytes, double seconds);

// AlgBandwidthGBps * BusBandwidthFactor.
double BusBandwidthGBps(Collective c, uint64_t bytes, double seconds, int nranks);

}  // namespace cc
