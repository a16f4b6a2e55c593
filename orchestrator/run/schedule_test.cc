#include "orchestrator/run/schedule.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace cc {
namespace {

std::vector<std::string> Nodes(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back("n" + std::to_string(i));
  return v;
}

void ExpectValidTournament(int n) {
  SCOPED_TRACE("n=" + std::to_string(n));
  auto nodes = Nodes(n);
  auto rounds = RoundRobinRounds(nodes);
  EXPECT_EQ(rounds.size(), static_cast<size_t>(n % 2 == 0 ? n - 1 : n));
  std::map<std::pair<std::string, std::string>, int> met;
  for (const auto& round : rounds) {
    EXPECT_EQ(round.size(), static_cast<size_t>(n / 2));
    std::set<std::string> busy;
    for (const auto& [a, b] : round) {
      EXPECT_NE(a, b);
      EXPECT_TRUE(busy.insert(a).second) << a << " twice in a round";
      EXPECT_TRUE(busy.insert(b).second) << b << " twice in a round";
      ++met[{std::min(a, b), std::max(a, b)}];
    }
  }
  EXPECT_EQ(met.size(), static_cast<size_t>(n * (n - 1) / 2));
  for (const auto& [pair, count] : met) {
    EXPECT_EQ(count, 1) << pair.first << "-" << pair.second;
  }
}

TEST(Schedule, EveryPairMeetsExactlyOnce) {
  for (int n = 2; n <= 17; ++n) ExpectValidTournament(n);
  ExpectValidTournament(64);
}

TEST(Schedule, OneNodeHasNoRounds) {
  EXPECT_TRUE(RoundRobinRounds({"solo"}).empty());
  EXPECT_TRUE(RoundRobinRounds({}).empty());
}

TEST(Schedule, TwoNodesMeetInOneRound) {
  auto rounds = RoundRobinRounds({"a", "b"});
  ASSERT_EQ(rounds.size(), 1u);
  ASSERT_EQ(rounds[0].size(), 1u);
  EXPECT_EQ(rounds[0][0], (NodePair{"a", "b"}));
}

TEST(Schedule, OddCountIdlesEachNodeExactlyOnce) {
  auto nodes = Nodes(5);
  std::map<std::string, int> idle;
  for (const auto& round : RoundRobinRounds(nodes)) {
    std::set<std::string> busy;
    for (const auto& [a, b] : round) busy.insert({a, b});
    for (const auto& n : nodes) idle[n] += busy.count(n) ? 0 : 1;
  }
  for (const auto& n : nodes) EXPECT_EQ(idle[n], 1) << n;
}

TEST(Schedule, SizesFormatWithTheLargestExactSuffix) {
  EXPECT_EQ(FormatSize(8), "8");
  EXPECT_EQ(FormatSize(1024), "1K");
  EXPECT_EQ(FormatSize(1536), "1536");
  EXPECT_EQ(FormatSize(256ull << 20), "256M");
  EXPECT_EQ(FormatSize(3ull << 30), "3G");
  EXPECT_EQ(FormatSize(0), "0");
}

TEST(Schedule, RangeDoublesLikeNcclTests) {
  auto r = ParseSizes("8-256M");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 26u);  // 8 = 2^3 .. 256M = 2^28
  EXPECT_EQ(r->front(), 8u);
  EXPECT_EQ(r->at(1), 16u);
  EXPECT_EQ(r->back(), 256ull << 20);
  auto odd = ParseSizes("1K-5K");
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(*odd, (std::vector<uint64_t>{1024, 2048, 4096}));
}

TEST(Schedule, ListsSinglesAndJsonParse) {
  auto l = ParseSizes("1K, 1M,1G");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, (std::vector<uint64_t>{1024, 1 << 20, 1 << 30}));
  auto one = ParseSizes("64kib");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, std::vector<uint64_t>{65536});
  auto j = ParseSizes("[8, \"2M\"]");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(*j, (std::vector<uint64_t>{8, 2 << 20}));
  auto jv = ParseSizesJson(nlohmann::json::array({1024, "1K"}));
  ASSERT_TRUE(jv.ok());
  EXPECT_EQ(*jv, (std::vector<uint64_t>{1024, 1024}));
}

TEST(Schedule, FormattedSizesParseBack) {
  for (uint64_t s : {8ull, 1536ull, 1ull << 10, 96ull << 20, 2ull << 30}) {
    auto r = ParseSizes(FormatSize(s));
    ASSERT_TRUE(r.ok()) << FormatSize(s);
    EXPECT_EQ(r->at(0), s);
  }
}

TEST(Schedule, BadSizeTextIsAnErrorNamingThePart) {
  for (const char* bad : {"", "  ", "12Q", "K", "0", "-5", "256M-8", "1K,,2K", "1K,", "[8, -1]",
                          "[1.5]", "[", "99999999999999999T", "1P"}) {
    auto r = ParseSizes(bad);
    EXPECT_FALSE(r.ok()) << "'" << bad << "' parsed";
    if (!r.ok()) {
      EXPECT_EQ(r.status().kind(), ErrorKind::kBadArgument);
    }
  }
  std::string many = "1";
  for (size_t i = 0; i < kMaxSizes; ++i) many += ",1";
  EXPECT_FALSE(ParseSizes(many).ok());
  auto r = ParseSizes("8,12Q");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("12Q"), std::string::npos);
}

}  // namespace
}  // namespace cc
