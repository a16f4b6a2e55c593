#include "orchestrator/fleet.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "orchestrator/fake_transport.h"

namespace cc {
namespace {

// A file that starts like an ELF binary for `machine`: all Fleet reads of
// it is the header (architecture), its bytes (push) and their hash (name).
std::string FakeAgentBinary(uint16_t machine, const std::string& tag) {
  std::string content(sizeof(Elf64_Ehdr) + tag.size(), '\0');
  std::memcpy(content.data(), ELFMAG, SELFMAG);
  std::memcpy(content.data() + offsetof(Elf64_Ehdr, e_machine), &machine, 2);
  std::memcpy(content.data() + sizeof(Elf64_Ehdr), tag.data(), tag.size());
  char tmpl[] = "/tmp/cc-fleet-test-XXXXXX";
  int fd = mkstemp(tmpl);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(tmpl, std::ios::binary) << content;
  return tmpl;
}

std::vector<Node> Nodes(int n) {
  std::vector<Node> nodes(n);
  for (int i = 0; i < n; ++i) {
    nodes[i].name = "n" + std::to_string(i + 1);
    nodes[i].ssh.agent_dir = "/opt/cc/";
    nodes[i].ssh.command_timeout_s = 5;
  }
  return nodes;
}

// A node of `arch` whose probe (`uname -m; stat`) answers from the files
// the transport holds, and whose agent says hello unless `hangs`.
FakeNode ScriptedNode(FakeTransport& t, const std::string& name,
                      const std::string& arch, bool hangs = false) {
  FakeNode node;
  FakeProgram agent = FakeAgent([](const nlohmann::json&) {
    return std::vector<nlohmann::json>{};
  });
  if (hangs) agent = FakeProgram{}, agent.hang = true;
  node.program.on_start = [&t, name, arch, agent](const CommandLine& cmd) {
    if (cmd.argv.at(0) == "sh") {
      const std::string& script = cmd.argv.at(2);
      std::string size = "missing";
      for (const auto& [path, content] : t.Files(name)) {
        if (script.find("'" + path + "'") != std::string::npos) {
          size = std::to_string(content.size());
        }
      }
      return FakeReply::Exit({arch, size});
    }
    if (agent.hang) return FakeReply::Hang();
    return agent.on_start(cmd);
  };
  node.program.on_line = [agent](const CommandLine& cmd, const std::string& line) {
    return agent.on_line ? agent.on_line(cmd, line) : FakeReply{};
  };
  return node;
}

TEST(Fleet, PushesTheAgentOnceUnderItsContentAddressAndGreetsIt) {
  std::string binary = FakeAgentBinary(EM_X86_64, "v1");
  auto nodes = Nodes(3);
  FakeTransport t;
  for (const auto& n : nodes) t.SetNode(n.name, ScriptedNode(t, n.name, "x86_64"));
  FleetOptions o;
  o.agent_binary = binary;
  o.fanout = 2;
  {
    Fleet fleet(t, nodes, o);
    std::atomic<int> done{0};
    ASSERT_TRUE(fleet.Prepare([&](const NodeState&) { ++done; }).ok());
    EXPECT_EQ(done.load(), 3);
    for (const auto& s : fleet.states()) {
      EXPECT_TRUE(s->usable()) << s->node->name << ": " << s->status.ToString();
      EXPECT_EQ(s->agent_path.rfind("/opt/cc/agent-", 0), 0u) << s->agent_path;
      EXPECT_EQ(s->agent_path.size(), std::string("/opt/cc/agent-").size() + 16);
    }
    EXPECT_EQ(fleet.bytes_pushed(), 3 * static_cast<long long>(sizeof(Elf64_Ehdr) + 2));
  }
  for (const auto& n : nodes) EXPECT_EQ(t.UploadCount(n.name), 1) << n.name;

  // The next run finds it there: nothing is pushed.
  Fleet again(t, nodes, o);
  ASSERT_TRUE(again.Prepare([](const NodeState&) {}).ok());
  EXPECT_EQ(again.bytes_pushed(), 0);
  for (const auto& n : nodes) EXPECT_EQ(t.UploadCount(n.name), 1) << n.name;

  // A new build is a new name, so it is pushed beside the old one.
  std::string v2 = FakeAgentBinary(EM_X86_64, "v2");
  o.agent_binary = v2;
  Fleet upgraded(t, nodes, o);
  ASSERT_TRUE(upgraded.Prepare([](const NodeState&) {}).ok());
  EXPECT_GT(upgraded.bytes_pushed(), 0);
  EXPECT_EQ(t.Files("n1").size(), 2u);
  std::remove(binary.c_str());
  std::remove(v2.c_str());
}

TEST(Fleet, ANodeOfAnotherArchitectureFailsWithWhatToBuild) {
  std::string binary = FakeAgentBinary(EM_X86_64, "x");
  auto nodes = Nodes(2);
  FakeTransport t;
  t.SetNode("n1", ScriptedNode(t, "n1", "x86_64"));
  t.SetNode("n2", ScriptedNode(t, "n2", "aarch64"));
  FleetOptions o;
  o.agent_binary = binary;
  Fleet fleet(t, nodes, o);
  ASSERT_TRUE(fleet.Prepare([](const NodeState&) {}).ok());
  EXPECT_TRUE(fleet.Find("n1")->usable());
  const NodeState* arm = fleet.Find("n2");
  ASSERT_FALSE(arm->usable());
  EXPECT_EQ(arm->step, "push");
  EXPECT_NE(arm->status.message().find(
                "node is aarch64 but the agent was built for x86_64; build "
                "clustercheck-agent for aarch64"),
            std::string::npos)
      << arm->status.ToString();
  EXPECT_EQ(t.UploadCount("n2"), 0);
  EXPECT_EQ(OutcomeForNodeError(arm->status), Outcome::kFail);
  std::remove(binary.c_str());
}

TEST(Fleet, AnAgentThatNeverSaysHelloIsAHangAndTheOthersGoOn) {
  std::string binary = FakeAgentBinary(EM_X86_64, "x");
  auto nodes = Nodes(3);
  FakeTransport t;
  for (const auto& n : nodes) {
    t.SetNode(n.name, ScriptedNode(t, n.name, "x86_64", /*hangs=*/n.name == "n2"));
  }
  FleetOptions o;
  o.agent_binary = binary;
  o.hello_timeout_s = 0.3;
  Fleet fleet(t, nodes, o);
  ASSERT_TRUE(fleet.Prepare([](const NodeState&) {}).ok());
  const NodeState* slow = fleet.Find("n2");
  ASSERT_FALSE(slow->usable());
  EXPECT_EQ(slow->step, "hello");
  EXPECT_EQ(OutcomeForNodeError(slow->status), Outcome::kHang) << slow->status.ToString();
  EXPECT_EQ(fleet.Usable().size(), 2u);
  std::remove(binary.c_str());
}

TEST(Fleet, AMissingAgentBinaryIsNamed) {
  FakeTransport t;
  auto nodes = Nodes(1);
  FleetOptions o;
  o.agent_binary = "/nonexistent/clustercheck-agent";
  Fleet fleet(t, nodes, o);
  Status s = fleet.Prepare([](const NodeState&) {});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent/clustercheck-agent"), std::string::npos);
}

TEST(Fleet, UnreachableNodesFailAtConnectWithTheirReason) {
  std::string binary = FakeAgentBinary(EM_X86_64, "x");
  auto nodes = Nodes(2);
  FakeTransport t;
  t.SetNode("n1", ScriptedNode(t, "n1", "x86_64"));
  FakeNode down;
  down.connect_error = Status::Unreachable("n2: no route to host");
  t.SetNode("n2", down);
  FleetOptions o;
  o.agent_binary = binary;
  Fleet fleet(t, nodes, o);
  ASSERT_TRUE(fleet.Prepare([](const NodeState&) {}).ok());
  EXPECT_EQ(fleet.Find("n2")->step, "connect");
  EXPECT_TRUE(fleet.Find("n2")->status.Is(ErrorKind::kUnreachable));
  EXPECT_TRUE(fleet.Find("n1")->usable());
  std::remove(binary.c_str());
}

}  // namespace
}  // namespace cc
