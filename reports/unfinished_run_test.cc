#include "reports/unfinished_run.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

RunData Killed() {
  RunData d;
  d.run.id = 7;
  d.run.status = "killed";
  d.run.meta = {{"stages", {"facts", "sleep"}},
                {"liveness",
                 {{"status", "killed"},
                  {"reason", "controller pid 9 on ctl died without finishing the run"}}}};
  for (const char* n : {"a", "b"}) {
    NodeResult r;
    r.node = n;
    r.stage = "connect";
    r.outcome = Outcome::kPass;
    r.at = std::string("2026-12-03T10:00:0") + (n[0] == 'a' ? "1Z" : "2Z");
    d.node_results.push_back(r);
  }
  NodeResult f;
  f.node = "a";
  f.stage = "facts";
  f.outcome = Outcome::kFail;
  f.at = "2026-12-03T10:00:05Z";
  d.node_results.push_back(f);
  return d;
}

TEST(UnfinishedRun, AKilledRunSaysWhyAndWhatEachStageStored) {
  EXPECT_EQ(DescribeUnfinishedRun(Killed()),
            "killed: controller pid 9 on ctl died without finishing the run\n"
            "stored before it died: connect 2 pass; facts 1 fail; sleep nothing\n"
            "last result at 2026-12-03T10:00:05Z\n");
}

TEST(UnfinishedRun, ARunStillGoingSaysWhatIsStoredSoFar) {
  RunData d = Killed();
  d.run.status = "running";
  d.run.meta.erase("liveness");
  std::string s = DescribeUnfinishedRun(d);
  EXPECT_EQ(s.rfind("running: the run did not finish\nstored so far: connect 2 pass", 0), 0u) << s;
}

TEST(UnfinishedRun, FinishedRunsSayNothing) {
  RunData d = Killed();
  for (const char* s : {"done", "interrupted", "aborted"}) {
    d.run.status = s;
    EXPECT_EQ(DescribeUnfinishedRun(d), "");
  }
}

}  // namespace
}  // namespace cc
