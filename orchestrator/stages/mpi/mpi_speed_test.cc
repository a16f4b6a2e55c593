#include "orchestrator/stages/mpi/mpi_speed.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

// A bandwidth result of iters round trips of 4 MiB at `gbps`.
PairResult Bw(const std::string& a, const std::string& b, double gbps, int iters = 20) {
  PairResult r;
  r.stage = "mpi";
  r.src = a;
  r.dst = b;
  r.check = "bandwidth";
  r.unit = "GB/s";
  r.outcome = Outcome::kPass;
  r.value = gbps;
  r.message = std::to_string(gbps) + " GB/s";
  r.evidence = {{"iters", iters}, {"bw_bytes", 4 << 20}};
  return r;
}

TEST(MpiSpeed, TheNoiseOfALoadedMachineHasNoSuspect) {
  // Healthy veths on a busy 2-core machine: 1.1 to 2.6 GB/s.
  std::vector<PairResult> p = {Bw("a", "b", 2.6), Bw("c", "d", 1.1), Bw("a", "c", 2.0),
                               Bw("b", "d", 1.5), Bw("a", "d", 2.4), Bw("b", "c", 1.2)};
  SpeedJudgement j = SlowSuspects(p, SpeedRule{});
  EXPECT_TRUE(j.suspects.empty());
  EXPECT_DOUBLE_EQ(j.median, 1.75);
}

TEST(MpiSpeed, APairFarBelowTheMedianIsASuspect) {
  std::vector<PairResult> p = {Bw("a", "b", 10), Bw("c", "d", 9.5), Bw("a", "c", 10.2),
                               Bw("b", "d", 2.0)};
  SpeedJudgement j = SlowSuspects(p, SpeedRule{});
  ASSERT_EQ(j.suspects.size(), 1u);
  EXPECT_EQ(j.suspects[0], 3u);
}

TEST(MpiSpeed, AShortMeasurementIsNotJudged) {
  // 2 round trips of 4 MiB at 2 GB/s: 8 ms.
  std::vector<PairResult> p = {Bw("a", "b", 10), Bw("c", "d", 10), Bw("a", "c", 10),
                               Bw("b", "d", 2.0, 2)};
  SpeedJudgement j = SlowSuspects(p, SpeedRule{});
  EXPECT_TRUE(j.suspects.empty());
  EXPECT_NE(j.note.find("shorter than 50 ms"), std::string::npos) << j.note;
  EXPECT_NEAR(MeasuredSeconds(p[3]), 2 * 2 * (4 << 20) / 2e9, 1e-9);
}

TEST(MpiSpeed, FewPairsGiveNoMedianToCompareWith) {
  std::vector<PairResult> p = {Bw("a", "b", 10), Bw("c", "d", 1)};
  SpeedJudgement j = SlowSuspects(p, SpeedRule{});
  EXPECT_TRUE(j.suspects.empty());
  EXPECT_FALSE(j.note.empty());
}

TEST(MpiSpeed, TinyAbsoluteDifferencesAreNoise) {
  EXPECT_FALSE(IsSlow(0.002, 0.006, SpeedRule{}));  // a third, but 4 MB/s apart
  EXPECT_TRUE(IsSlow(2, 10, SpeedRule{}));
  EXPECT_FALSE(IsSlow(6, 10, SpeedRule{}));
}

TEST(MpiSpeed, ASuspectIsSlowOnlyWhenTheQuietRetestAgrees) {
  PairResult first = Bw("b", "d", 2.0);
  PairResult slow = ConfirmSlow(first, Bw("b", "d", 2.5), 10, SpeedRule{});
  EXPECT_EQ(slow.outcome, Outcome::kWarn);
  EXPECT_EQ(slow.state, "slow");
  EXPECT_EQ(slow.evidence["speed"]["slow"], true);
  EXPECT_EQ(slow.evidence["speed"]["attempts"].size(), 2u);

  PairResult fine = ConfirmSlow(first, Bw("b", "d", 9.0), 10, SpeedRule{});
  EXPECT_EQ(fine.outcome, Outcome::kPass);
  EXPECT_DOUBLE_EQ(*fine.value, 9.0);
  EXPECT_EQ(fine.evidence["speed"]["slow"], false);

  PairResult broken = Bw("b", "d", 0);
  broken.outcome = Outcome::kFail;
  broken.value.reset();
  PairResult unjudged = ConfirmSlow(first, broken, 10, SpeedRule{});
  EXPECT_EQ(unjudged.outcome, Outcome::kPass);
  EXPECT_EQ(unjudged.evidence["speed"]["slow"], false);
}

TEST(MpiSpeed, ASlowRetestIsNotBelievedWhenTheControlPairIsAsSlow) {
  // Seen on a healthy 8-node run at load 15: a pair at 17% of the median in
  // the burst and 36% alone, while every pair was that slow alone.
  PairResult first = Bw("b", "d", 2.0);
  PairResult control = Bw("a", "c", 3.0);
  PairResult loaded = ConfirmSlow(first, Bw("b", "d", 2.5), 10, SpeedRule{}, &control);
  EXPECT_EQ(loaded.outcome, Outcome::kPass);
  EXPECT_EQ(loaded.evidence["speed"]["slow"], false);
  EXPECT_EQ(loaded.evidence["speed"]["control"]["pair"], "a<->c");

  PairResult fast_control = Bw("a", "c", 9.5);
  PairResult slow = ConfirmSlow(first, Bw("b", "d", 2.5), 10, SpeedRule{}, &fast_control);
  EXPECT_EQ(slow.outcome, Outcome::kWarn);
  EXPECT_NE(slow.evidence["speed"]["why"].get<std::string>().find("control pair a<->c"),
            std::string::npos);

  PairResult broken_control = Bw("a", "c", 0);
  broken_control.outcome = Outcome::kFail;
  broken_control.value.reset();
  PairResult unjudged = ConfirmSlow(first, Bw("b", "d", 2.5), 10, SpeedRule{}, &broken_control);
  EXPECT_EQ(unjudged.outcome, Outcome::kPass);
  EXPECT_EQ(unjudged.evidence["speed"]["slow"], false);
}

TEST(MpiSpeed, TheControlIsATypicalPairThatSharesNoNodeWithTheSuspect) {
  std::vector<PairResult> p = {Bw("a", "b", 10), Bw("c", "d", 9), Bw("b", "c", 10.1),
                               Bw("a", "d", 2)};
  // Suspect a<->d: b<->c is the only pair without a or d.
  EXPECT_EQ(ControlPairFor(p, 3, 10), 2);
  // Three nodes: every pair shares one with the suspect; the nearest to the median.
  std::vector<PairResult> q = {Bw("a", "b", 10), Bw("b", "c", 7), Bw("a", "c", 2)};
  EXPECT_EQ(ControlPairFor(q, 2, 9), 0);
  std::vector<PairResult> lone = {Bw("a", "b", 2)};
  EXPECT_EQ(ControlPairFor(lone, 0, 10), -1);
}

}  // namespace
}  // namespace cc
