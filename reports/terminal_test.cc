#include "reports/terminal.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

RunData HealthyRun() {
  RunData d;
  d.run.status = "done";
  d.run.exit_code = 0;
  NodeResult r;
  r.stage = "ports";
  r.node = "n1";
  r.check = "listen";
  r.outcome = Outcome::kPass;
  d.node_results.push_back(r);
  return d;
}

TEST(VerdictLine, AWarningVerdictOverResultsThatAreNotWarningsIsAWarningOfTheRun) {
  RunData d = HealthyRun();
  EXPECT_EQ(VerdictLine(d).rfind("PASS: ", 0), 0u) << VerdictLine(d);
  // The controller lost contact with n3, which answered again: its probes
  // are skips, the verdict a warn (orchestrator/stages/ports/node_lost.h).
  Verdict v;
  v.stage = "ports";
  v.kind = "contact-lost";
  v.severity = Outcome::kWarn;
  v.nodes = {"n3"};
  d.verdicts.push_back(v);
  EXPECT_EQ(VerdictLine(d).rfind("PASS with warnings: ", 0), 0u) << VerdictLine(d);
  d.verdicts.back().severity = Outcome::kFail;
  EXPECT_EQ(VerdictLine(d).rfind("FAIL: a failing verdict on n3", 0), 0u) << VerdictLine(d);
}

}  // namespace
}  // namespace cc
