#include "orchestrator/stages/parity/cuda_compat.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "orchestrator/stages/parity/version_pin.h"

namespace cc {
namespace {

using ::testing::HasSubstr;
using ::testing::Optional;

TEST(CudaMajorMinor, ReadsDottedAndDriverApiForms) {
  EXPECT_THAT(CudaMajorMinor("12.4"), Optional(std::string("12.4")));
  EXPECT_THAT(CudaMajorMinor("12.4.131"), Optional(std::string("12.4")));
  EXPECT_THAT(CudaMajorMinor("12040"), Optional(std::string("12.4")));
  EXPECT_THAT(CudaMajorMinor("13000"), Optional(std::string("13.0")));
  EXPECT_EQ(CudaMajorMinor("twelve"), std::nullopt);
  EXPECT_EQ(CudaMajorMinor("12."), std::nullopt);
  EXPECT_EQ(CudaMajorMinor(""), std::nullopt);
  EXPECT_EQ(CudaMajorMinor("12"), std::nullopt);
}

TEST(MinimumDriverFor, ListsTheToolkitDriverOfEachRelease) {
  const std::pair<const char*, const char*> kExpected[] = {
      {"12.0", "525.60.13"}, {"12.1", "530.30.02"}, {"12.2", "535.54.03"}, {"12.3", "545.23.06"},
      {"12.4", "550.54.14"}, {"12.5", "555.42.02"}, {"12.6", "560.28.03"}, {"12.8", "570.26"},
      {"12.9", "575.51.03"}, {"13.0", "580.65.06"}, {"11.8", "520.61.05"}};
  for (const auto& [cuda, driver] : kExpected) {
    EXPECT_THAT(MinimumDriverFor(cuda), Optional(std::string(driver))) << cuda;
  }
  EXPECT_THAT(MinimumDriverFor("12.4.1"), Optional(std::string("550.54.14")));
}

// A typo in the table (a digit dropped, two rows swapped) shows up as a
// newer CUDA release asking for an older driver, or one below its family.
TEST(MinimumDriverFor, NewerReleasesNeverNeedAnOlderDriver) {
  std::string previous;
  int rows = 0;
  for (int major = 11; major <= 13; ++major) {
    for (int minor = 0; minor <= 9; ++minor) {
      std::string cuda = std::to_string(major) + "." + std::to_string(minor);
      std::optional<std::string> d = MinimumDriverFor(cuda);
      if (!d) continue;
      ++rows;
      ASSERT_THAT(MinorCompatDriverFor(cuda), Optional(testing::_)) << cuda;
      // 11.0 shipped before the 11.x family minimum 450.80.02 existed.
      if (cuda != "11.0") {
        EXPECT_GE(CompareVersions(*d, *MinorCompatDriverFor(cuda)), 0) << cuda;
      }
      if (!previous.empty()) {
        EXPECT_GT(CompareVersions(*d, previous), 0) << cuda;
      }
      previous = *d;
    }
  }
  EXPECT_GE(rows, 20);
  EXPECT_EQ(MinimumDriverFor(NewestCudaInTable()), previous);
}

TEST(MinimumDriverFor, UnknownReleasesHaveNoEntry) {
  EXPECT_EQ(MinimumDriverFor("12.7"), std::nullopt);
  EXPECT_EQ(MinimumDriverFor("14.0"), std::nullopt);
  EXPECT_EQ(MinimumDriverFor("10.2"), std::nullopt);
  EXPECT_EQ(MinimumDriverFor("garbage"), std::nullopt);
}

TEST(MinorCompatDriverFor, NamesTheFamilyMinimum) {
  EXPECT_THAT(MinorCompatDriverFor("11.4"), Optional(std::string("450.80.02")));
  EXPECT_THAT(MinorCompatDriverFor("12.9"), Optional(std::string("525.60.13")));
  EXPECT_THAT(MinorCompatDriverFor("13.0"), Optional(std::string("580.65.06")));
  EXPECT_EQ(MinorCompatDriverFor("10.2"), std::nullopt);
  EXPECT_EQ(MinorCompatDriverFor("14.0"), std::nullopt);
}

TEST(CudaFromNcclVersion, ReadsTheCudaSuffix) {
  EXPECT_THAT(CudaFromNcclVersion("2.28.9+cuda13.0"), Optional(std::string("13.0")));
  EXPECT_THAT(CudaFromNcclVersion("2.21.5+cuda12.4"), Optional(std::string("12.4")));
  EXPECT_EQ(CudaFromNcclVersion("2.21.5"), std::nullopt);
}

TEST(JudgeDriverForCuda, NewEnoughDriverPasses) {
  CompatVerdict v = JudgeDriverForCuda("550.54.15", "12.4", "torch 2.3.0 built for CUDA 12.4");
  EXPECT_EQ(v.outcome, Outcome::kPass) << v.message;
  EXPECT_EQ(v.required, ">=550.54.14");
  EXPECT_EQ(JudgeDriverForCuda("550.54.14", "12.4", "x").outcome, Outcome::kPass);
  EXPECT_EQ(JudgeDriverForCuda("580.65.06", "12.4", "x").outcome, Outcome::kPass);
}

TEST(JudgeDriverForCuda, DriverBelowTheFamilyMinimumFails) {
  CompatVerdict v = JudgeDriverForCuda("520.61.05", "12.4", "torch 2.3 built for CUDA 12.4");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_EQ(v.message,
            "driver 520.61.05 is older than 525.60.13, the minimum for CUDA "
            "12.4 (needed by torch 2.3 built for CUDA 12.4); CUDA 12.4's own "
            "driver is 550.54.14");
  EXPECT_EQ(v.required, ">=525.60.13");
}

TEST(JudgeDriverForCuda, CudaThirteenOnATwelveDriverFails) {
  CompatVerdict v = JudgeDriverForCuda("575.51.03", "13.0", "NCCL 2.28.9+cuda13.0");
  EXPECT_EQ(v.outcome, Outcome::kFail);
  EXPECT_THAT(v.message, HasSubstr("older than 580.65.06, the minimum for CUDA 13.0"));
}

TEST(JudgeDriverForCuda, MinorVersionCompatibilityOnlyWarns) {
  CompatVerdict v = JudgeDriverForCuda("525.60.13", "12.4", "torch 2.3 built for CUDA 12.4");
  EXPECT_EQ(v.outcome, Outcome::kWarn);
  EXPECT_THAT(v.message, HasSubstr("driver 525.60.13 is older than 550.54.14"));
  EXPECT_THAT(v.message, HasSubstr("minor version compatibility (>= 525.60.13)"));
  EXPECT_THAT(v.message, HasSubstr("with limitations (no PTX JIT of newer code)"));
  EXPECT_EQ(v.required, ">=550.54.14");
}

TEST(JudgeDriverForCuda, CudaElevenZeroRunsOnItsOwnOlderDriver) {
  // 11.0 shipped with 450.51.05, below the 11.x family minimum 450.80.02.
  EXPECT_EQ(JudgeDriverForCuda("450.51.06", "11.0", "x").outcome, Outcome::kPass);
  EXPECT_EQ(JudgeDriverForCuda("450.36.06", "11.0", "x").outcome, Outcome::kFail);
  EXPECT_EQ(JudgeDriverForCuda("450.51.06", "11.1", "x").outcome, Outcome::kFail);
}

TEST(JudgeDriverForCuda, ReleaseMissingFromTheTableIsJudgedByItsFamily) {
  CompatVerdict v = JudgeDriverForCuda("595.45.04", "13.9", "x");
  EXPECT_EQ(v.outcome, Outcome::kWarn);
  EXPECT_THAT(v.message, HasSubstr("not in the driver table"));
  EXPECT_EQ(JudgeDriverForCuda("575.51.03", "13.9", "x").outcome, Outcome::kFail);
}

TEST(JudgeDriverForCuda, UnknownMajorIsSkippedWithTheReason) {
  CompatVerdict v = JudgeDriverForCuda("600.10", "14.0", "x");
  EXPECT_EQ(v.outcome, Outcome::kSkip);
  EXPECT_THAT(v.message, HasSubstr("no driver table entry for CUDA 14.0"));
}

TEST(JudgeDriverForCuda, GarbageIsAnError) {
  EXPECT_EQ(JudgeDriverForCuda("unknown", "12.4", "x").outcome, Outcome::kError);
  EXPECT_EQ(JudgeDriverForCuda("550.54.15", "cu124", "x").outcome, Outcome::kError);
}

TEST(JudgeCudaDriverVersion, EqualOrNewerPasses) {
  EXPECT_EQ(JudgeCudaDriverVersion("12.4", "12.4", "x").outcome, Outcome::kPass);
  EXPECT_EQ(JudgeCudaDriverVersion("13.0", "12.4", "x").outcome, Outcome::kPass);
  EXPECT_EQ(JudgeCudaDriverVersion("12080", "12.4", "x").outcome, Outcome::kPass);
}

TEST(JudgeCudaDriverVersion, OlderMinorWarnsOlderMajorFails) {
  CompatVerdict warn = JudgeCudaDriverVersion("12.2", "12.4", "torch 2.3 built for CUDA 12.4");
  EXPECT_EQ(warn.outcome, Outcome::kWarn);
  EXPECT_THAT(warn.message, HasSubstr("the driver supports CUDA 12.2, older than CUDA 12.4"));
  CompatVerdict fail = JudgeCudaDriverVersion("12.9", "13.0", "NCCL");
  EXPECT_EQ(fail.outcome, Outcome::kFail);
  EXPECT_EQ(fail.required, ">=13.0");
  EXPECT_EQ(JudgeCudaDriverVersion("n/a", "12.4", "x").outcome, Outcome::kError);
}

}  // namespace
}  // namespace cc
