#include "orchestrator/stages/mpi/mpirun_exec.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

// RunMpirun's deadlines on a stand-in for mpirun (a shell loop).
MpirunDeadlines Deadlines(double idle_s, double total_s) { return {idle_s, total_s, "test"}; }

TEST(RunMpirunDeadlines, SteadyOutputOutlivesTheIdleDeadline) {
  // A line every 0.1 s for 1.5 s: past the 0.5 s idle deadline, not hung.
  MpirunRun r = RunMpirun({"/bin/sh", "-c",
                           "i=0; while [ $i -lt 15 ]; do echo $i; "
                           "sleep 0.1; i=$((i+1)); done"},
                          Deadlines(0.5, 30));
  EXPECT_FALSE(r.hung) << r.stop_why;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_lines.size(), 15u);
}

TEST(RunMpirunDeadlines, SilenceIsAHang) {
  MpirunRun r = RunMpirun({"/bin/sh", "-c", "echo started; sleep 30"}, Deadlines(0.5, 30));
  EXPECT_TRUE(r.hung);
  EXPECT_EQ(r.stop, MpirunStop::kIdle);
  EXPECT_NE(r.stop_why.find("no new line"), std::string::npos);
  EXPECT_EQ(r.stdout_lines.size(), 1u);
}

TEST(RunMpirunDeadlines, TheCapStopsAJobThatStillPrints) {
  MpirunRun r =
      RunMpirun({"/bin/sh", "-c", "while true; do echo x; sleep 0.1; done"}, Deadlines(0.5, 1));
  EXPECT_TRUE(r.hung);
  EXPECT_EQ(r.stop, MpirunStop::kCap);
  EXPECT_GT(r.stdout_lines.size(), 3u);
}

}  // namespace
}  // namespace cc
