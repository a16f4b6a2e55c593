#include "orchestrator/analysis/verdict_next_step.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

using nlohmann::json;

TEST(VerdictNextStep, AStagesOwnNextStepIsTakenAsItIs) {
  EXPECT_EQ(NextStepFromEvidence({{"next_step", "open tcp 29500 on n3"}, {"chain", "INPUT"}}, "n3"),
            "open tcp 29500 on n3");
}

TEST(VerdictNextStep, AnMtuMismatchSaysWhichMtuOnWhichInterfaceOfWhichNode) {
  // The nics stage's "selected" result: the problem names the interface,
  // the selection says what the rest of the subnet has.
  json evidence = {{"subnet", "10.42.0.0/24"},
                   {"problems",
                    {{{"kind", "mtu"},
                      {"nic", "eth1"},
                      {"message", "n4: eth1 MTU 1500, the rest of 10.42.0.0/24 has 9000"}}}}};
  json selection = {{"subnets",
                     {{{"subnet", "10.42.0.0/24"}, {"mtu", 9000}},
                      {{"subnet", "192.168.0.0/24"}, {"mtu", 1500}}}}};
  std::string step = NextStepFromEvidence(evidence, "n4", SubnetMtus(selection));
  EXPECT_EQ(step.rfind("set MTU 9000 on eth1 of n4 (ip link set dev eth1 mtu 9000", 0), 0u) << step;
  EXPECT_EQ(step.find("cable"), std::string::npos) << step;
  // Without the selection it still names the interface and the subnet.
  EXPECT_EQ(NextStepFromEvidence(evidence, "n4"),
            "give eth1 of n4 the MTU the rest of 10.42.0.0/24 has");
  // A problem that carries its expected MTU needs no selection.
  json own = {{"problems", {{{"kind", "mtu"}, {"nic", "ib0"}, {"expected_mtu", 4092}}}}};
  EXPECT_EQ(NextStepFromEvidence(own, "n2").rfind("set MTU 4092 on ib0 of n2", 0), 0u);
  EXPECT_EQ(NextStepFromEvidence({{"interface", "eth1"}, {"expected_mtu", 9000}}, "n1")
                .rfind("set MTU 9000 on eth1 of n1", 0),
            0u);
}

TEST(VerdictNextStep, SeveralProblemsOfANodeAreJoinedEachOnce) {
  json evidence = {{"subnet", "10.0.0.0/24"},
                   {"problems",
                    {{{"kind", "down"}, {"nic", "eth1"}},
                     {{"kind", "missing"}},
                     {{"kind", "down"}, {"nic", "eth1"}},
                     {{"kind", "unknown-kind"}}}}};
  EXPECT_EQ(NextStepFromEvidence(evidence, "n5"),
            "bring eth1 of n5 up (ip link set dev eth1 up); if it stays down, check its cable and "
            "switch port; give n5 an address on 10.0.0.0/24, the cluster's network");
}

TEST(VerdictNextStep, AFirewallCauseNamesThePortAndTheChain) {
  EXPECT_EQ(NextStepFromEvidence({{"port_range", "32768-60999"}, {"chain", "INPUT"}}, "n6"),
            "open tcp 32768-60999 in the INPUT chain of n6's firewall (iptables -S INPUT; nft "
            "list ruleset)");
  EXPECT_EQ(NextStepFromEvidence({{"port", 29500}}, "n6"), "") << "no chain: no cause named";
}

TEST(VerdictNextStep, AVersionCauseInstallsWhatTheRestHas) {
  EXPECT_EQ(
      NextStepFromEvidence({{"component", "driver"}, {"majority", "550.54.15"}}, "n4"),
      "install driver 550.54.15 on n4 (the version the rest of the cluster has), or drain n4");
}

TEST(VerdictNextStep, EvidenceWithoutACauseGivesNothing) {
  EXPECT_EQ(NextStepFromEvidence(json::object(), "n1"), "");
  EXPECT_EQ(NextStepFromEvidence(json(), "n1"), "");
  EXPECT_EQ(NextStepFromEvidence({{"next_step", 3}}, "n1"), "");
}

TEST(VerdictNextStep, JoinStepsKeepsDistinctStepsAndCountsTheRest) {
  EXPECT_EQ(JoinSteps({"a", "", "b", "a"}), "a; b");
  EXPECT_EQ(JoinSteps({"a", "b", "c", "d", "e"}, 2), "a; b (and 3 more in the evidence)");
  EXPECT_EQ(JoinSteps({}), "");
}

}  // namespace
}  // namespace cc
