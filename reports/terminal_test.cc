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

TEST(VerdictLine, ACauseIsNamedAndWhatItExplainsOnlyCounted) {
  RunData d = HealthyRun();
  Verdict v;
  v.stage = "nics";
  v.kind = "link-down";
  v.severity = Outcome::kFail;
  v.nodes = {"n3"};
  v.cause = CauseScope::kNode;
  d.verdicts.push_back(v);
  d.node_results.push_back(NodeCheck("nics", "n3", "selected", Outcome::kFail, "eth0 is down"));
  PairResult p;
  p.stage = "nics";
  p.src = "n1";
  p.dst = "n3";
  p.check = "tcp";
  p.outcome = Outcome::kFail;
  d.pair_results.push_back(p);
  EXPECT_EQ(VerdictLine(d), "FAIL: link-down on n3 (nics); 2 failed results explained by it");
  // A failure elsewhere is still named, after the cause.
  d.node_results.push_back(NodeCheck("parity", "n1", "driver", Outcome::kFail, "odd"));
  EXPECT_EQ(VerdictLine(d),
            "FAIL: link-down on n3 (nics); 2 failed results explained by it; also 1 failed, 0 "
            "hung on n1");
}

TEST(VerdictLine, ALinkCauseExplainsAPairStagesNodeResultOnItsEnds) {
  RunData d = HealthyRun();
  Verdict v;
  v.stage = "ports";
  v.kind = "one-way";
  v.severity = Outcome::kFail;
  v.nodes = {"n1", "n2"};
  v.pairs = {{"n1", "n2"}};
  v.cause = CauseScope::kLink;
  d.verdicts.push_back(v);
  PairResult p;
  p.stage = "nics";
  p.src = "n1";
  p.dst = "n2";
  p.check = "tcp";
  p.outcome = Outcome::kFail;
  d.pair_results.push_back(p);
  d.node_results.push_back(
      NodeCheck("nics", "n1", "selected", Outcome::kFail, "n1 does not reach n2"));
  EXPECT_EQ(VerdictLine(d),
            "FAIL: one-way between n1 and n2 (ports); 2 failed results explained by it");
}

}  // namespace
}  // namespace cc
