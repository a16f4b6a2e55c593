#include "orchestrator/run/fleet.h"

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

#include "common/fake_clock.h"
#include "common/shell_frame.h"
#include "orchestrator/transport/fake_transport.h"

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

// The frame a framed probe script asked for (common/shell_frame.h).
ShellFrame FrameOf(const std::string& script) {
  const std::string kBegin = ":clustercheck-begin:";
  size_t at = script.find(kBegin);
  EXPECT_NE(at, std::string::npos) << "the probe is not framed: " << script;
  if (at == std::string::npos) return MakeShellFrame("none");
  at += kBegin.size();
  return MakeShellFrame(script.substr(at, script.find(':', at) - at));
}

// How a node's login shell behaves for every command it starts.
struct ShellScript {
  std::vector<std::string> banner;  // printed before the command's output
  int startup_ms = 0;               // spent before the command runs
  Clock* clock = &RealClock();      // on which the startup is spent
};

// A node of `arch` whose probe (`uname -m; stat`, framed) answers from the
// files the transport holds, and whose agent says hello unless `hangs`.
FakeNode ScriptedNode(FakeTransport& t, const std::string& name, const std::string& arch,
                      bool hangs = false, ShellScript shell = {}) {
  FakeNode node;
  FakeProgram agent =
      FakeAgent([](const nlohmann::json&) { return std::vector<nlohmann::json>{}; });
  if (hangs) agent = FakeProgram{}, agent.hang = true;
  node.program.on_start = [&t, name, arch, agent, shell](const CommandLine& cmd) {
    shell.clock->SleepFor(std::chrono::milliseconds(shell.startup_ms));
    FakeReply reply;
    if (cmd.argv.at(0) == "sh") {
      const std::string& script = cmd.argv.at(2);
      std::string size = "missing";
      for (const auto& [path, content] : t.Files(name)) {
        if (script.find("'" + path + "'") != std::string::npos) {
          size = std::to_string(content.size());
        }
      }
      ShellFrame frame = FrameOf(script);
      reply = FakeReply::Exit({"", frame.begin, arch, size, "", frame.end});
    } else if (agent.hang) {
      reply = FakeReply::Hang();
    } else {
      reply = agent.on_start(cmd);
    }
    reply.lines.insert(reply.lines.begin(), shell.banner.begin(), shell.banner.end());
    return reply;
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
      EXPECT_EQ(s->shell_noise, "") << "a quiet shell has nothing to say";
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

TEST(Fleet, ANodeMarkedUnusableIsSkippedByLaterStagesWithItsReason) {
  std::string binary = FakeAgentBinary(EM_X86_64, "lost");
  auto nodes = Nodes(3);
  FakeTransport t;
  for (const auto& n : nodes) t.SetNode(n.name, ScriptedNode(t, n.name, "x86_64"));
  FleetOptions o;
  o.agent_binary = binary;
  Fleet fleet(t, nodes, o);
  ASSERT_TRUE(fleet.Prepare([](const NodeState&) {}).ok());
  ASSERT_EQ(fleet.Usable().size(), 3u);
  // What the ports stage does with a node it found lost.
  fleet.MarkUnusable("n2", Status::Unreachable("lost during the ports stage (probe batch 1 of 2)"),
                     "lost in ports");
  fleet.MarkUnusable("nosuch", Status::Unreachable("x"), "x");  // ignored
  std::vector<std::string> usable;
  for (NodeState* s : fleet.Usable()) usable.push_back(s->node->name);
  EXPECT_EQ(usable, (std::vector<std::string>{"n1", "n3"}));
  std::atomic<int> visited{0};
  fleet.ForEach({}, [&](NodeState& s) {
    EXPECT_NE(s.node->name, "n2");
    ++visited;
  });
  EXPECT_EQ(visited.load(), 2);  // a later stage does not try n2 again
  NodeState* n2 = fleet.Find("n2");
  EXPECT_EQ(n2->step, "lost in ports");
  EXPECT_NE(n2->status.ToString().find("lost during the ports stage"), std::string::npos);
  EXPECT_EQ(OutcomeForNodeError(n2->status), Outcome::kFail);
}

TEST(Fleet, ReconnectGivesANodeThatAnswersAFreshAgentAndLeavesOneThatDoesNotAsItWas) {
  std::string binary = FakeAgentBinary(EM_X86_64, "again");
  auto nodes = Nodes(2);
  FakeTransport t;
  for (const auto& n : nodes) t.SetNode(n.name, ScriptedNode(t, n.name, "x86_64"));
  FleetOptions o;
  o.agent_binary = binary;
  Fleet fleet(t, nodes, o);
  ASSERT_TRUE(fleet.Prepare([](const NodeState&) {}).ok());
  NodeState* n1 = fleet.Find("n1");
  AgentChannel* first = n1->agent.get();
  ASSERT_TRUE(fleet.Reconnect(*n1).ok());
  EXPECT_EQ(t.ConnectCount("n1"), 2);
  EXPECT_NE(n1->agent.get(), first) << "the node keeps its old agent";
  EXPECT_TRUE(n1->usable());
  EXPECT_EQ(t.UploadCount("n1"), 1) << "the agent is there already: nothing is pushed again";
  auto hello = n1->agent->Call("facts", nlohmann::json::object(), Deadline::InSeconds(5));
  EXPECT_TRUE(hello.ok()) << "the new agent does not answer: " << hello.status().ToString();

  // n2 went away since: the error says which step failed, the node keeps
  // what it had (its stage decides what that means).
  FakeNode down;
  down.connect_error = Status::Unreachable("n2: no route to host");
  t.SetNode("n2", down);
  NodeState* n2 = fleet.Find("n2");
  AgentChannel* kept = n2->agent.get();
  Status again = fleet.Reconnect(*n2);
  EXPECT_TRUE(again.Is(ErrorKind::kUnreachable)) << again.ToString();
  EXPECT_NE(again.ToString().find("connecting again"), std::string::npos) << again.ToString();
  EXPECT_EQ(n2->agent.get(), kept);
  std::remove(binary.c_str());
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
  EXPECT_NE(arm->status.message().find("node is aarch64 but the agent was built for x86_64; build "
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
  FakeClock clock;
  FleetOptions o;
  o.agent_binary = binary;
  o.hello_timeout_s = 20;
  o.clock = &clock;
  Fleet fleet(t, nodes, o);
  ASSERT_TRUE(fleet.Prepare([](const NodeState&) {}).ok());
  const NodeState* slow = fleet.Find("n2");
  ASSERT_FALSE(slow->usable());
  EXPECT_EQ(slow->step, "hello");
  EXPECT_GE(slow->prepare_ms, 20000) << "it was not given its 20 s";
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

TEST(Fleet, ATalkingShellIsNotReadAsTheArchitectureAndItsTextIsKept) {
  std::string binary = FakeAgentBinary(EM_X86_64, "x");
  auto nodes = Nodes(2);
  FakeTransport t;
  t.SetNode("n1", ScriptedNode(t, "n1", "x86_64"));
  ShellScript talks;
  talks.banner = {"Welcome to the Example HPC Center", "You have mail."};
  t.SetNode("n2", ScriptedNode(t, "n2", "x86_64", false, talks));
  FleetOptions o;
  o.agent_binary = binary;
  Fleet fleet(t, nodes, o);
  ASSERT_TRUE(fleet.Prepare([](const NodeState&) {}).ok());
  const NodeState* n2 = fleet.Find("n2");
  EXPECT_TRUE(n2->usable()) << n2->status.ToString();
  EXPECT_EQ(t.UploadCount("n2"), 1);
  EXPECT_EQ(n2->shell_noise, "Welcome to the Example HPC Center\nYou have mail.");
  EXPECT_EQ(fleet.Find("n1")->shell_noise, "");
  std::remove(binary.c_str());
}

TEST(Fleet, TextBeforeTheAgentsHelloIsKeptWhenTheProbeSawNone) {
  // Without push there is no probe: the hello is where the text shows.
  auto nodes = Nodes(1);
  FakeTransport t;
  ShellScript talks;
  talks.banner = {"conda: base activated"};
  t.SetNode("n1", ScriptedNode(t, "n1", "x86_64", false, talks));
  FleetOptions o;
  o.agent_binary = "/bin/true";
  o.push = false;
  Fleet fleet(t, nodes, o);
  ASSERT_TRUE(fleet.Prepare([](const NodeState&) {}).ok());
  const NodeState* n1 = fleet.Find("n1");
  EXPECT_TRUE(n1->usable()) << n1->status.ToString();
  EXPECT_EQ(n1->shell_noise, "conda: base activated\n");
}

TEST(Fleet, ASlowShellIsMeasuredAndAddedToTheHelloDeadline) {
  std::string binary = FakeAgentBinary(EM_X86_64, "x");
  auto nodes = Nodes(1);
  FakeTransport t;
  FakeClock clock;
  ShellScript slow;
  slow.startup_ms = 4000;
  slow.clock = &clock;
  t.SetNode("n1", ScriptedNode(t, "n1", "x86_64", /*hangs=*/true, slow));
  FleetOptions o;
  o.agent_binary = binary;
  o.hello_timeout_s = 2;
  o.clock = &clock;
  Fleet fleet(t, nodes, o);
  ASSERT_TRUE(fleet.Prepare([](const NodeState&) {}).ok());
  const NodeState* n1 = fleet.Find("n1");
  EXPECT_DOUBLE_EQ(n1->shell_startup_s, 4.0);
  // The agent never says hello: it is given 2 s plus the 4 s the shell
  // takes (its own start included), so 6 s from its start, not 2. In all:
  // the probe's 4 s, those 6 s, and the 0.2 s the closed agent is given to
  // exit.
  EXPECT_EQ(n1->step, "hello");
  EXPECT_DOUBLE_EQ(n1->prepare_ms, 4000 + 6000 + 200) << "the shell's startup was not added";
  std::remove(binary.c_str());
}

}  // namespace
}  // namespace cc
