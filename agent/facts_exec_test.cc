#include "agent/facts_exec.h"

#include <gtest/gtest.h>

namespace cc::agent {
namespace {

TEST(FactsExec, CapturesStdoutStderrAndExitCode) {
  ExecResult r =
      RunProgram({"sh", "-c", "echo out; echo err >&2; exit 3"}, Deadline::InSeconds(10));
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(FactsExec, AMissingProgramDoesNotStartAndSaysWhy) {
  ExecResult r = RunProgram({"clustercheck-no-such-program"}, Deadline::InSeconds(10));
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("clustercheck-no-such-program"), std::string::npos);
  EXPECT_NE(r.error.find("No such file"), std::string::npos);
}

TEST(FactsExec, TheDeadlineKillsTheWholeGroup) {
  auto start = std::chrono::steady_clock::now();
  // The background sleep keeps stdout open: only a group kill ends it.
  ExecResult r = RunProgram({"sh", "-c", "sleep 30 & sleep 30"}, Deadline::InSeconds(0.5));
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(FactsExec, StdinIsEmpty) {
  ExecResult r = RunProgram({"cat"}, Deadline::InSeconds(10));
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace cc::agent
