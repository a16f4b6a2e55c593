#include "orchestrator/stages/ports/ports_wording.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

TEST(PortsWording, APortPhraseReadsAsProtocolAndPort) {
  EXPECT_EQ(PortPhrase("tcp/29500", nlohmann::json::object()), "tcp 29500");
  EXPECT_EQ(PortPhrase("tcp/50000", {{"port_range", "50000-50010"}}), "tcp 50000-50010");
  EXPECT_EQ(PortPhrase("ssh", nlohmann::json::object()), "ssh");
}

PairFinding BadNode(bool receiver_only, bool sender_only) {
  PairFinding f;
  f.pattern = PairPattern::kBadNode;
  f.check = "tcp/29500";
  f.nodes = {"n3"};
  f.receiver_only = receiver_only;
  f.sender_only = sender_only;
  f.states = "filtered";
  f.count = "5 of 5";
  return f;
}

TEST(PortsWording, ANodeNoPeerReachesIsPortBlockedAtItsInboundFirewall) {
  PairWording w = WordPortsFinding(BadNode(true, false));
  EXPECT_EQ(w.kind, "port-blocked");
  EXPECT_EQ(w.summary, "n3 does not accept tcp/29500 from its peers (filtered from 5 of 5)");
  EXPECT_EQ(w.next_step, "open tcp 29500 inbound on n3's firewall");
}

TEST(PortsWording, ASenderOnlyBadNodeKeepsTheGenericKindAndSummary) {
  PairWording w = WordPortsFinding(BadNode(false, true));
  EXPECT_EQ(w.kind, "");
  EXPECT_EQ(w.summary, "");
  EXPECT_EQ(w.next_step, "check n3's outbound firewall and routes for tcp 29500");
  EXPECT_EQ(WordPortsFinding(BadNode(false, false)).next_step,
            "check n3's firewall for tcp 29500 in both directions");
}

TEST(PortsWording, TheOtherFindingsNameTheFirewallToOpen) {
  PairFinding f;
  f.check = "tcp/29500";
  f.pattern = PairPattern::kWidespread;
  PairWording w = WordPortsFinding(f);
  EXPECT_EQ(w.kind, "port-blocked");
  EXPECT_EQ(w.next_step,
            "open tcp 29500 on every node (firewall), and check that nothing else holds the port");
  f.pattern = PairPattern::kOneWay;
  f.nodes = {"n1", "n2"};
  EXPECT_EQ(WordPortsFinding(f).next_step, "allow tcp 29500 from n1 in n2's firewall");
  f.pattern = PairPattern::kBadLink;
  EXPECT_EQ(WordPortsFinding(f).next_step,
            "check the firewalls of n1 and n2 for tcp 29500 between them");
  f.pattern = PairPattern::kHang;
  f.nodes = {"n1", "n2", "n3"};
  EXPECT_EQ(WordPortsFinding(f).next_step, "look for a stuck listener or agent on n[1-3]");
}

}  // namespace
}  // namespace cc
