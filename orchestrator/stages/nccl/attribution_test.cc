#include "orchestrator/stages/nccl/attribution.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

namespace cc {
namespace {

std::vector<std::string> Nodes(int n) {
  std::vector<std::string> v;
  for (int i = 1; i <= n; ++i) v.push_back("gpu0" + std::to_string(i));
  return v;
}

// A full round-robin matrix where `broken(a, b)` decides each pair.
AttributionInput Matrix(const std::vector<std::string>& nodes,
                        const std::function<Outcome(const std::string&, const std::string&)>& of) {
  AttributionInput in;
  in.nodes = nodes;
  for (const auto& round : RoundRobinRounds(nodes)) {
    for (const auto& [a, b] : round) in.pairs.push_back({a, b, of(a, b)});
  }
  return in;
}

auto BadNode(const std::set<std::string>& bad, Outcome how = Outcome::kFail) {
  return [bad, how](const std::string& a, const std::string& b) {
    return bad.count(a) || bad.count(b) ? how : Outcome::kPass;
  };
}

std::vector<std::string> Named(const Attribution& a) {
  std::vector<std::string> v;
  for (const auto& b : a.bad_nodes) v.push_back(b.node);
  return v;
}

TEST(Attribution, OneBadNodeAmongEightIsNamed) {
  auto in = Matrix(Nodes(8), BadNode({"gpu05"}));
  Attribution a = AttributeFailures(in);
  EXPECT_EQ(Named(a), std::vector<std::string>{"gpu05"});
  EXPECT_EQ(a.bad_nodes[0].failed_with.size(), 7u);
  EXPECT_NE(a.bad_nodes[0].reason.find("all 7"), std::string::npos) << a.bad_nodes[0].reason;
  EXPECT_TRUE(a.bad_links.empty());
  EXPECT_TRUE(a.suspects.empty());
  EXPECT_EQ(a.known_good.size(), 7u);
  EXPECT_TRUE(NextProbesToIsolate(in, a).empty());
}

TEST(Attribution, OneBadLinkIsNamedAsALinkAndNeitherNodeIsBlamed) {
  auto in = Matrix(Nodes(8), [](const std::string& a, const std::string& b) {
    bool link = (a == "gpu02" && b == "gpu07") || (a == "gpu07" && b == "gpu02");
    return link ? Outcome::kHang : Outcome::kPass;
  });
  Attribution a = AttributeFailures(in);
  EXPECT_TRUE(a.bad_nodes.empty());
  ASSERT_EQ(a.bad_links.size(), 1u);
  EXPECT_EQ(a.bad_links[0].a, "gpu02");
  EXPECT_EQ(a.bad_links[0].b, "gpu07");
  EXPECT_EQ(a.bad_links[0].outcome, Outcome::kHang);
  EXPECT_TRUE(a.suspects.empty());
}

TEST(Attribution, TwoBadNodesAreBothNamed) {
  auto in = Matrix(Nodes(8), BadNode({"gpu03", "gpu08"}, Outcome::kHang));
  Attribution a = AttributeFailures(in);
  EXPECT_EQ(Named(a), (std::vector<std::string>{"gpu03", "gpu08"}));
  EXPECT_EQ(a.bad_nodes[0].outcome, Outcome::kHang);
  EXPECT_TRUE(a.bad_links.empty());
  EXPECT_TRUE(a.unexplained.empty());
}

TEST(Attribution, AllPassNamesNothing) {
  Attribution a = AttributeFailures(Matrix(Nodes(8), BadNode({})));
  EXPECT_TRUE(a.bad_nodes.empty());
  EXPECT_TRUE(a.bad_links.empty());
  EXPECT_TRUE(a.suspects.empty());
  EXPECT_EQ(a.known_good.size(), 8u);
}

TEST(Attribution, HalfTheClusterBadDoesNotBlameTheGoodHalf) {
  // gpu03 fails with gpu01 and gpu02 and passes with gpu04 only: a majority
  // of failures, but its failing partners pass nowhere, so it is not blamed.
  Attribution a = AttributeFailures(Matrix(Nodes(4), BadNode({"gpu01", "gpu02"})));
  EXPECT_EQ(Named(a), (std::vector<std::string>{"gpu01", "gpu02"}));
}

TEST(Attribution, MajorityOfFailuresWithHealthyPartnersNamesTheNode) {
  // gpu01 works only with gpu02 and gpu03 and fails with the other five.
  auto in = Matrix(Nodes(8), [](const std::string& a, const std::string& b) {
    if (a != "gpu01" && b != "gpu01") return Outcome::kPass;
    const std::string& other = a == "gpu01" ? b : a;
    return other == "gpu02" || other == "gpu03" ? Outcome::kPass : Outcome::kFail;
  });
  Attribution a = AttributeFailures(in);
  EXPECT_EQ(Named(a), std::vector<std::string>{"gpu01"});
  EXPECT_NE(a.bad_nodes[0].reason.find("5 of 7"), std::string::npos) << a.bad_nodes[0].reason;
  EXPECT_TRUE(a.bad_links.empty());
}

TEST(Attribution, TwoNodesThatFailTogetherAreOnlySuspects) {
  AttributionInput in{{"a", "b"}, {{"a", "b", Outcome::kFail}}, {}};
  Attribution a = AttributeFailures(in);
  EXPECT_TRUE(a.bad_nodes.empty());
  EXPECT_TRUE(a.bad_links.empty());
  EXPECT_EQ(a.suspects, (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(NextProbesToIsolate(in, a).empty()) << "no known-good partner";
}

TEST(Attribution, IntraNodeFailureNamesTheNodeAndExplainsItsPairs) {
  AttributionInput in{
      {"a", "b"}, {{"a", "b", Outcome::kFail}}, {{"a", Outcome::kFail}, {"b", Outcome::kPass}}};
  Attribution a = AttributeFailures(in);
  EXPECT_EQ(Named(a), std::vector<std::string>{"a"});
  EXPECT_NE(a.bad_nodes[0].reason.find("intra-node"), std::string::npos);
  EXPECT_TRUE(a.suspects.empty());
}

TEST(Attribution, FirstRoundFailureIsProbedAgainstKnownGoodNodes) {
  // Only the first round ran; one of its pairs broke.
  auto nodes = Nodes(8);
  AttributionInput in;
  in.nodes = nodes;
  const auto rounds = RoundRobinRounds(nodes);
  for (const auto& [x, y] : rounds[0]) {
    bool broken = x == "gpu04" || y == "gpu04";
    in.pairs.push_back({x, y, broken ? Outcome::kFail : Outcome::kPass});
  }
  Attribution a = AttributeFailures(in);
  ASSERT_EQ(a.suspects.size(), 2u);
  EXPECT_EQ(a.known_good.size(), 6u);
  auto probes = NextProbesToIsolate(in, a);
  ASSERT_EQ(probes.size(), 2u);
  std::set<std::string> used;
  std::set<std::string> suspects(a.suspects.begin(), a.suspects.end());
  std::set<std::string> good(a.known_good.begin(), a.known_good.end());
  for (const auto& [s, g] : probes) {
    EXPECT_TRUE(suspects.count(s)) << s;
    EXPECT_TRUE(good.count(g)) << g;
    EXPECT_TRUE(used.insert(s).second && used.insert(g).second) << "not disjoint";
  }
  // The probes come back: gpu04 fails again, its old partner passes.
  for (const auto& [s, g] : probes) {
    in.pairs.push_back({s, g, s == "gpu04" ? Outcome::kFail : Outcome::kPass});
  }
  // One more round of probes, then gpu04 has failed with 3 partners that
  // pass elsewhere.
  a = AttributeFailures(in);
  for (const auto& [s, g] : NextProbesToIsolate(in, a)) {
    in.pairs.push_back({s, g, s == "gpu04" ? Outcome::kFail : Outcome::kPass});
  }
  a = AttributeFailures(in);
  EXPECT_EQ(Named(a), std::vector<std::string>{"gpu04"});
  EXPECT_TRUE(a.suspects.empty());
}

TEST(Attribution, SkippedAndErroredPairsSayNothing) {
  auto in =
      Matrix(Nodes(4), [](const std::string&, const std::string&) { return Outcome::kError; });
  in.pairs.push_back({"gpu01", "gpu02", Outcome::kSkip});
  Attribution a = AttributeFailures(in);
  EXPECT_TRUE(a.bad_nodes.empty());
  EXPECT_TRUE(a.suspects.empty());
  EXPECT_TRUE(a.known_good.empty());
}

}  // namespace
}  // namespace cc
