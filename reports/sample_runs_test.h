// Synthetic stored runs for the report, diff and golden tests. Defined in
// sample_runs_test.cc, so only the test binary has them. Every timestamp,
// path and version is fixed, so rendered output is stable.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "orchestrator/store/store.h"

namespace cc::testdata {

struct SampleRuns {
  // gpu[01-04]; "after" differs from "before" in exactly two ways: the
  // nccl allreduce pair gpu01<->gpu03 regressed (pass -> fail) and gpu02's
  // parity/driver recovered (fail -> pass).
  int64_t before = 0;
  int64_t after = 0;
  // gpu[01-08] with faults in every stage: connect (gpu06 unreachable,
  // gpu07 host key changed, gpu08 hangs at hello), parity (gpu04's
  // driver), nics (gpu05's ib0 down), ports (tcp/29500 filtered into gpu03
  // from every peer, refused gpu01 -> gpu02 only), nccl (gpu02<->gpu04
  // slow, gpu03<->gpu05 hangs), mpi (launch fails gpu01<->gpu04).
  int64_t faulty = 0;
};

// Writes the three runs, in the order above, into `store`.
Result<SampleRuns> WriteSampleRuns(Store& store);

}  // namespace cc::testdata
