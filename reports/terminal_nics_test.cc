// The nics block of the terminal summary, from a stored selection.
#include <gtest/gtest.h>

#include "orchestrator/stages/nics/nic_recommend.h"
#include "reports/terminal.h"

namespace cc {
namespace {

TEST(TerminalNics, TheSelectionPrintsEnvLinesBadNodesAndExclusions) {
  NicInfo up;
  up.name = "eth0";
  up.operstate = "up";
  up.mtu = 9000;
  NicInfo down = up;
  down.operstate = "down";
  NicInfo decoy = up;
  decoy.name = "docker0";
  decoy.addresses = {"172.17.0.1/16"};
  std::vector<NodeNics> nodes(3);
  for (int i = 0; i < 3; ++i) {
    nodes[i].node = "node" + std::to_string(i + 1);
    NicInfo n = i == 2 ? down : up;
    n.addresses = {"10.1.0." + std::to_string(i + 1) + "/24"};
    nodes[i].nics = {n, decoy};
  }
  RunData d;
  d.run.meta["nics"] = SelectionJson(SelectNics(nodes, {}));
  std::string text = RenderTerminal(d, TerminalOptions{});
  EXPECT_NE(text.find("\nnics: 10.1.0.0/24: on 3 of 3 nodes"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  export NCCL_SOCKET_IFNAME=eth0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\n  fail: node3: eth0 10.1.0.3 is down (operstate down)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  excluded 172.17.0.0/16: decoy: 172.17.0.1 (docker0)"), std::string::npos)
      << text;
}

TEST(TerminalNics, NoSelectionSaysWhyAndARunWithoutTheStageSaysNothing) {
  RunData d;
  EXPECT_EQ(RenderTerminal(d, TerminalOptions{}).find("nics:"), std::string::npos);
  d.run.meta["nics"] = SelectionJson(SelectNics({}, {}));
  EXPECT_NE(RenderTerminal(d, TerminalOptions{}).find("nics: nothing to recommend: no nodes"),
            std::string::npos);
}

}  // namespace
}  // namespace cc
