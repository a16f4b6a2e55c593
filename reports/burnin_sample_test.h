// A fabricated burn-in for the report tests and for looking at the page
// (burnin_html.h). Defined in burnin_sample_test.cc, so only the test
// binary has it.
#pragma once

#include "orchestrator/burnin/burnin_summary.h"

namespace cc::testdata {

// gpu[01-06], 20 of 20 rounds 6 minutes apart (2 h), every pair tested
// every round; max failure rate 20%.
//   ports tcp/29500: gpu01 <-> gpu03 failed rounds 5, 9 and 13 (15%, warn:
//     flaky); every other pair passed.
//   nccl allreduce (GB/s, 4 GPUs a node): ~180 everywhere; pairs with
//     gpu05 fall to ~150 from round 12, when gpu05 overheats.
//   GPUs: gpu05's temperature climbs from 62 to 90 °C; from round 12 its
//     SM clock drops from 1980 to ~1600 MHz with HW thermal slowdown (and
//     SW thermal from round 15). The other nodes stay at 60-64 °C.
//   counters: gpu02 mlx5_0/1 symbol_error rises by 2 every other round;
//     gpu04 mlx5_1/1 link_downed stays 0.
BurnInSummary SampleBurnIn();

}  // namespace cc::testdata
