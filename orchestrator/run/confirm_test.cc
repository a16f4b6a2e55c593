#include "orchestrator/run/confirm.h"

#include <gtest/gtest.h>

#include <set>

namespace cc {
namespace {

PairResult Probe(Outcome o, const std::string& state, const std::string& message) {
  PairResult r;
  r.stage = "ports";
  r.src = "a";
  r.dst = "b";
  r.check = "tcp/29500";
  r.outcome = o;
  r.state = state;
  r.message = message;
  return r;
}

TEST(Confirm, OnlyFailuresAndHangsAreRetested) {
  std::vector<PairResult> rs = {
      Probe(Outcome::kPass, "open", ""), Probe(Outcome::kFail, "filtered", "timeout"),
      Probe(Outcome::kWarn, "in-use", ""), Probe(Outcome::kHang, "", "no answer"),
      Probe(Outcome::kError, "", "could not test")};
  EXPECT_EQ(ToConfirm(rs), (std::vector<size_t>{1, 3}));
}

TEST(Confirm, AgreeingRetestStandsWithBothAttempts) {
  auto r = Confirm(Probe(Outcome::kFail, "filtered", "timeout after 2 s"),
                   Probe(Outcome::kFail, "filtered", "timeout after 10 s"));
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_EQ(r.message, "timeout after 10 s");
  EXPECT_EQ(r.evidence["confirmation"], kConfirmed);
  ASSERT_EQ(r.evidence["attempts"].size(), 2u);
  EXPECT_EQ(r.evidence["attempts"][0]["message"], "timeout after 2 s");
  EXPECT_FALSE(IsFlaky(r));
}

TEST(Confirm, AHangConfirmedByAFailureIsAFailure) {
  auto r = Confirm(Probe(Outcome::kHang, "", "no answer"),
                   Probe(Outcome::kFail, "refused", "connection refused"));
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_EQ(r.state, "refused");
}

TEST(Confirm, DisagreeingRetestIsAFlakyWarning) {
  auto r = Confirm(Probe(Outcome::kFail, "filtered", "timeout after 2 s"),
                   Probe(Outcome::kPass, "open", "open"));
  EXPECT_EQ(r.outcome, Outcome::kWarn);
  EXPECT_EQ(r.state, "filtered");
  EXPECT_TRUE(IsFlaky(r));
  EXPECT_EQ(r.evidence["attempts"][1]["outcome"], "pass");
  EXPECT_NE(r.message.find("timeout after 2 s"), std::string::npos);
}

TEST(Confirm, RetestThatCouldNotRunLeavesTheFirstUnconfirmed) {
  auto r = Confirm(Probe(Outcome::kFail, "filtered", "timeout"),
                   Probe(Outcome::kError, "", "agent gone"));
  EXPECT_EQ(r.outcome, Outcome::kFail);
  EXPECT_EQ(r.evidence["confirmation"], kUnconfirmed);
  RetestCounts c;
  c.Add(r);
  c.Add(Confirm(Probe(Outcome::kFail, "", "x"), Probe(Outcome::kPass, "", "")));
  EXPECT_EQ(c.ToJson(),
            (nlohmann::json{{"retested", 2}, {"confirmed", 0}, {"flaky", 1}, {"unconfirmed", 1}}));
}

TEST(QuietRounds, NoNodeIsInTwoPairsOfOneRound) {
  std::vector<std::pair<std::string, std::string>> pairs;
  // Every ordered pair of 7 nodes, as a port matrix retest could need.
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j)
      if (i != j) pairs.push_back({"n" + std::to_string(i), "n" + std::to_string(j)});
  auto rounds = QuietRounds(pairs);
  size_t total = 0;
  for (const auto& round : rounds) {
    std::set<std::string> busy;
    for (const auto& [a, b] : round) {
      EXPECT_TRUE(busy.insert(a).second) << a << " twice in a round";
      EXPECT_TRUE(busy.insert(b).second) << b << " twice in a round";
    }
    total += round.size();
  }
  EXPECT_EQ(total, pairs.size());
  // Degree 12 per node: greedy needs at most 2*12-1 rounds.
  EXPECT_LE(rounds.size(), 23u);
}

TEST(QuietRounds, OneReceiverWithManySendersGetsOneSenderPerRound) {
  std::vector<std::pair<std::string, std::string>> pairs = {
      {"a", "r"}, {"b", "r"}, {"c", "r"}, {"a", "b"}};
  auto rounds = QuietRounds(pairs);
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_EQ(rounds[0].size(), 1u);
  EXPECT_EQ(rounds[1].size(), 1u);
  EXPECT_EQ(rounds[2].size(), 2u);  // {a, b} waits until a and b are both free
}

}  // namespace
}  // namespace cc
