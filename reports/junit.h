// `clustercheck report --junit FILE`: JUnit XML for CI gating. One
// testsuite per stage; one testcase per node check (classname
// "<stage>.<check>", name the node) and one per pair that did not pass
// (name "src -> dst"). fail and hang are <failure> (type "fail"/"hang"),
// error is <error>, skip is <skipped>; warnings pass with their message in
// <system-out>. Passing pairs are counted in the suite's properties, not
// listed, so 40k port probes do not make a 40k-testcase file.
#pragma once

#include <ostream>
#include <string>

#include "orchestrator/store/run_data.h"

namespace cc {

// Writes the document as it goes: a run of 256 nodes has 130k skipped
// pairs (a docker0 decoy on every node), each a testcase.
void WriteJunit(std::ostream& out, const RunData& data);
std::string RenderJunit(const RunData& data);  // WriteJunit into a string

}  // namespace cc
