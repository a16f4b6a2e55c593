#include "orchestrator/run/pattern_rounds.h"

#include <gtest/gtest.h>

#include <map>

namespace cc {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(PatternRounds, ANodeFailingWithManyPeersIsRetestedWithAFewAtOnce) {
  Pairs pairs = {{"n4", "n1"}, {"n4", "n2"}, {"n4", "n3"}, {"n5", "n4"}, {"n4", "n6"}};
  auto rounds = QuietRounds(pairs, 3);
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0].size(), 3u);
  size_t total = 0;
  for (const auto& round : rounds) {
    std::map<std::string, int> in;
    for (const auto& [a, b] : round) {
      ++in[a];
      ++in[b];
    }
    for (const auto& [node, n] : in) {
      if (node != "n4") {
        EXPECT_EQ(n, 1) << node << " twice in a round";
      }
    }
    EXPECT_LE(in["n4"], 3);
    total += round.size();
  }
  EXPECT_EQ(total, pairs.size());
}

TEST(PatternRounds, WithAShareOfOneTheyAreQuietRounds) {
  Pairs pairs = {{"n4", "n1"}, {"n4", "n2"}, {"n1", "n2"}};
  auto rounds = QuietRounds(pairs, 1);
  EXPECT_EQ(rounds.size(), 3u);
}

TEST(PatternRounds, NodesInOnePairOnlyStayOnePairARound) {
  // n1-n2 and n3-n4: nobody is in two pairs, so both share round one.
  auto rounds = QuietRounds({{"n1", "n2"}, {"n3", "n4"}, {"n5", "n5"}}, 3);
  ASSERT_EQ(rounds.size(), 2u);
  EXPECT_EQ(rounds[0].size(), 2u);
  EXPECT_EQ(rounds[1], (Pairs{{"n5", "n5"}}));
}

}  // namespace
}  // namespace cc
