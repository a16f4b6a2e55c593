#include "orchestrator/stages/ports/stored_verdict.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

PortVerdict Receiver() {
  PortVerdict v;
  v.kind = "receiver";
  v.severity = Outcome::kFail;
  v.nodes = {"gpu03"};
  v.ports = {22, 29500};
  v.pairs = {{"gpu01", "gpu03"}, {"gpu02", "gpu03"}};
  v.message = "gpu03 drops tcp/22,29500 from every peer";
  v.next_step = "allow tcp 22,29500 in INPUT on gpu03";
  v.evidence = {{"rule", {{"node", "gpu03"}, {"chain", "INPUT"}}}};
  return v;
}

TEST(StoredVerdict, CarriesEveryFieldWithThePortsOwnKindInTheEvidence) {
  Verdict v = StoredVerdict(Receiver());
  EXPECT_EQ(v.kind, "port-blocked");
  EXPECT_EQ(v.severity, Outcome::kFail);
  EXPECT_EQ(v.stage, "ports");
  EXPECT_EQ(v.check, "tcp/22,29500");
  EXPECT_EQ(v.nodes, std::vector<std::string>{"gpu03"});
  EXPECT_EQ(v.pairs, Receiver().pairs);
  EXPECT_EQ(v.summary, Receiver().message);
  EXPECT_EQ(v.next_step, Receiver().next_step);
  EXPECT_EQ(v.evidence["stage_kind"], "receiver");
  EXPECT_EQ(v.evidence["rule"]["chain"], "INPUT");
}

TEST(StoredVerdict, KindsAreTheOnesAnalysisShares) {
  const std::pair<const char*, const char*> kinds[] = {
      {"nothing", "widespread"},     {"isolated", "bad-node"},
      {"sender", "bad-node"},        {"receiver", "port-blocked"},
      {"ephemeral", "port-blocked"}, {"port-everywhere", "port-blocked"},
      {"pair", "bad-link"},          {"one-way", "one-way"},
      {"wrong-host", "wrong-host"},  {"in-use", "in-use"},
      {"node-lost", "node-lost"}};
  for (const auto& [own, shared] : kinds) {
    PortVerdict p = Receiver();
    p.kind = own;
    Verdict v = StoredVerdict(p);
    EXPECT_EQ(v.kind, shared) << own;
    EXPECT_EQ(v.evidence["stage_kind"], own);
  }
}

TEST(StoredVerdict, ALongListOfPortsIsCutForOneLine) {
  PortVerdict p = Receiver();
  p.ports.clear();
  for (int port = 32768; port < 32868; ++port) p.ports.push_back(port);
  Verdict v = StoredVerdict(p);
  EXPECT_EQ(v.check.size(), 200u);
  EXPECT_EQ(v.check.substr(0, 10), "tcp/32768,");
  EXPECT_EQ(v.check.substr(197), "...");
}

TEST(StoredVerdict, ANodesOwnFailureIsANodeCauseAndALinksALinkCause) {
  const std::pair<const char*, CauseScope> scopes[] = {
      {"receiver", CauseScope::kNode}, {"ephemeral", CauseScope::kNode},
      {"isolated", CauseScope::kNode}, {"sender", CauseScope::kNode},
      {"one-way", CauseScope::kLink},  {"pair", CauseScope::kLink},
      {"nothing", CauseScope::kNone},  {"port-everywhere", CauseScope::kNone},
      {"in-use", CauseScope::kNone}};
  for (const auto& [kind, scope] : scopes) {
    PortVerdict v = Receiver();
    v.kind = kind;
    EXPECT_EQ(StoredVerdict(v).cause, scope) << kind;
  }
  PortVerdict warn = Receiver();
  warn.severity = Outcome::kWarn;
  EXPECT_EQ(StoredVerdict(warn).cause, CauseScope::kNone) << "a warning establishes nothing";
}

}  // namespace
}  // namespace cc
