#include "orchestrator/inventory/inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "build_paths.h"

namespace cc {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

Inventory Parse(const std::string& text, const Environment& env = {}) {
  Result<Inventory> r = ParseInventory(text, "pod.toml", env);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Inventory{};
}

// The whole message of a parse that must fail with kBadInventory.
std::string Error(const std::string& text, const Environment& env = {}) {
  Result<Inventory> r = ParseInventory(text, "pod.toml", env);
  EXPECT_FALSE(r.ok()) << "parsed unexpectedly:\n" << text;
  if (r.ok()) return "";
  EXPECT_EQ(r.status().kind(), ErrorKind::kBadInventory);
  return r.status().message();
}

const char kOneNode[] = "[[nodes]]\nname = \"n1\"\n";

// --- error paths: each message is file:line:column: key.path: reason ---

TEST(Inventory, UnknownTopLevelKeyIsLocatedWithAHint) {
  EXPECT_EQ(Error("name = \"x\"\ntransprot = \"ssh\"\n" + std::string(kOneNode)),
            "pod.toml:2:1: transprot: unknown key (did you mean 'transport'?)");
}

TEST(Inventory, BurnInMaxFailureRateIsAShareAndLocatedWhenWrong) {
  EXPECT_EQ(Parse(std::string(kOneNode)).burnin.max_failure_rate, 0)
      << "default: any failure fails";
  EXPECT_EQ(
      Parse(std::string(kOneNode) + "[burnin]\nmax_failure_rate = 0.05\n").burnin.max_failure_rate,
      0.05);
  EXPECT_EQ(Error(std::string(kOneNode) + "[burnin]\nmax_failure_rate = 5\n"),
            "pod.toml:4:20: burnin.max_failure_rate: expected a share from 0 to 1 (0.05 is 5 %)");
  EXPECT_EQ(Error(std::string(kOneNode) + "[burnin]\nmax_failure = 0.1\n"),
            "pod.toml:4:1: burnin.max_failure: unknown key");  // too far for a hint
}

TEST(Inventory, UnknownSshKeyIsLocated) {
  EXPECT_EQ(Error(std::string(kOneNode) + "[ssh]\nprot = 22\n"),
            "pod.toml:4:1: ssh.prot: unknown key (did you mean 'port'?)");
}

TEST(Inventory, SshDialBackIsOffByDefaultAndReachesEveryNode) {
  Inventory plain = Parse(std::string(kOneNode));
  EXPECT_FALSE(plain.ssh.dial_back);
  EXPECT_EQ(plain.ssh.dial_back_listen, "");
  Inventory on = Parse(std::string(kOneNode) +
                       "[ssh]\ndial_back = true\ndial_back_listen = \"10.0.0.254:7001\"\n");
  EXPECT_TRUE(on.ssh.dial_back);
  EXPECT_EQ(on.ssh.dial_back_listen, "10.0.0.254:7001");
  ASSERT_EQ(on.nodes.size(), 1u);
  EXPECT_TRUE(on.nodes[0].ssh.dial_back);
  EXPECT_EQ(Error(std::string(kOneNode) + "[ssh]\ndial_back_listen = \"10.0.0.1:99999\"\n"),
            "pod.toml:4:20: ssh.dial_back_listen: '10.0.0.1:99999' is not ADDRESS or ADDRESS:PORT");
  EXPECT_EQ(Error(std::string(kOneNode) + "[ssh]\ndial_back = \"yes\"\n"),
            "pod.toml:4:13: ssh.dial_back: expected true or false, got a string");
}

TEST(Inventory, ContainmentIsOnUnlessTheStagesTableTurnsItOff) {
  const std::string nodes = "[[nodes]]\nname = \"n1\"\n";
  auto on = ParseInventory(nodes, "on.toml");
  ASSERT_TRUE(on.ok()) << on.status().ToString();
  EXPECT_TRUE(on->containment);
  auto off = ParseInventory("[stages]\ncontainment = false\n" + nodes, "off.toml");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->containment);
  auto bad = ParseInventory("[stages]\ncontainment = \"no\"\n" + nodes, "bad.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("stages.containment"), std::string::npos)
      << bad.status().message();
}

// Past kDialBackAboveNodes nodes over ssh, dial_back is on unless the
// inventory sets it; below, or when set, it is as written.
TEST(Inventory, DialBackIsOnPastTheNodeCountUnlessTheInventorySetsIt) {
  auto nodes = [](int n, const std::string& extra) {
    return extra + "[[groups]]\nname = \"a\"\nnodes = [\"n[1-" + std::to_string(n) + "]\"]\n";
  };
  auto big = ParseInventory(nodes(129, ""), "big.toml");
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_TRUE(big->ssh.dial_back);
  EXPECT_TRUE(big->ssh.dial_back_auto);
  EXPECT_TRUE(big->nodes.back().ssh.dial_back_auto);
  auto small = ParseInventory(nodes(128, ""), "small.toml");
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_FALSE(small->ssh.dial_back);
  auto off = ParseInventory(nodes(200, "[ssh]\ndial_back = false\n"), "off.toml");
  ASSERT_TRUE(off.ok()) << off.status().ToString();
  EXPECT_FALSE(off->ssh.dial_back);
  EXPECT_FALSE(off->nodes[0].ssh.dial_back);
  auto local = ParseInventory(nodes(200, "transport = \"local\"\n"), "local.toml");
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_FALSE(local->ssh.dial_back);
}

TEST(Inventory, UnknownNodeSettingIsLocated) {
  EXPECT_EQ(Error("[[nodes]]\nname = \"n1\"\ngpu = 8\n"),
            "pod.toml:3:1: nodes[0].gpu: unknown key (did you mean 'gpus'?)");
}

TEST(Inventory, WrongTypeNamesBothTypes) {
  EXPECT_EQ(Error(std::string(kOneNode) + "[ssh]\nport = \"22\"\n"),
            "pod.toml:4:8: ssh.port: expected an integer, got a string");
  EXPECT_EQ(Error("[[nodes]]\nname = 7\n"),
            "pod.toml:2:8: nodes[0].name: expected a string, got an integer");
  EXPECT_EQ(Error("groups = \"gpu[1-2]\"\n"),
            "pod.toml:1:10: groups: expected an array of tables ([[groups]]), "
            "got a string");
}

TEST(Inventory, NodeInTwoGroupsIsADuplicate) {
  EXPECT_EQ(Error("[[groups]]\nname = \"a\"\nnodes = [\"n[1-3]\"]\n"
                  "[[groups]]\nname = \"b\"\nnodes = [\"n3\"]\n"),
            "pod.toml:6:10: groups[1].nodes[0]: node 'n3' is already in "
            "group 'a' (groups[0], line 3)");
}

TEST(Inventory, NodeTwiceInOneGroupIsADuplicate) {
  EXPECT_THAT(Error("[[groups]]\nname = \"a\"\nnodes = [\"n[1-3]\", \"n2\"]\n"),
              StartsWith("pod.toml:3:20: groups[0].nodes[1]: node 'n2' is "
                         "already in group 'a'"));
}

TEST(Inventory, NodeTwiceInNodesIsADuplicate) {
  EXPECT_EQ(Error("[[nodes]]\nname = \"n1\"\n[[nodes]]\nname = \"n[1-2]\"\n"),
            "pod.toml:4:8: nodes[1].name: node 'n1' is already declared in "
            "[[nodes]] (nodes[0], line 2)");
}

TEST(Inventory, GroupNameTwiceIsADuplicate) {
  EXPECT_EQ(Error("[[groups]]\nname = \"a\"\nnodes = [\"n1\"]\n"
                  "[[groups]]\nname = \"a\"\nnodes = [\"n2\"]\n"),
            "pod.toml:5:8: groups[1].name: group 'a' is already defined "
            "(groups[0])");
}

TEST(Inventory, EmptyClusterIsAnError) {
  EXPECT_EQ(Error("name = \"x\"\n"),
            "pod.toml:1:1: nodes: the inventory declares no nodes; add "
            "[[groups]] or [[nodes]]");
  EXPECT_THAT(Error(""), HasSubstr("declares no nodes"));
}

TEST(Inventory, GroupWithoutNodesIsAnError) {
  EXPECT_EQ(Error("[[groups]]\nname = \"a\"\nnodes = []\n"),
            "pod.toml:3:9: groups[0].nodes: a group needs at least one node");
  EXPECT_THAT(Error("[[groups]]\nname = \"a\"\n"),
              StartsWith("pod.toml:1:1: groups[0]: a group needs nodes"));
}

TEST(Inventory, BadHostlistRangeIsLocatedAtTheString) {
  EXPECT_EQ(Error("[[groups]]\nname = \"a\"\nnodes = [\"gpu[5-3]\"]\n"),
            "pod.toml:3:10: groups[0].nodes[0]: bad hostlist 'gpu[5-3]': "
            "range 5-3 is reversed at position 5");
  EXPECT_EQ(Error("[[nodes]]\nname = \"n[0-99999999]\"\n"),
            "pod.toml:2:8: nodes[0].name: bad hostlist 'n[0-99999999]': "
            "hostlist expands to more than 100000 hosts at position 1");
}

TEST(Inventory, PortOutOfRangeIsAnError) {
  EXPECT_EQ(Error(std::string(kOneNode) + "[ssh]\nport = 70000\n"),
            "pod.toml:4:8: ssh.port: 70000 is out of range (must be in "
            "1..65535)");
  EXPECT_EQ(Error("[[nodes]]\nname = \"n1\"\nport = 0\n"),
            "pod.toml:3:8: nodes[0].port: 0 is out of range (must be in "
            "1..65535)");
}

TEST(Inventory, HugeNumberIsASyntaxErrorWithPosition) {
  EXPECT_THAT(Error("[ssh]\nport = 99999999999999999999\n"), StartsWith("pod.toml:2:"));
}

TEST(Inventory, BadHostKeyPolicyListsTheChoices) {
  EXPECT_EQ(Error(std::string(kOneNode) + "[ssh]\nhost_key_policy = \"loose\"\n"),
            "pod.toml:4:19: ssh.host_key_policy: 'loose' is not a host key "
            "policy (strict, accept-new, off)");
}

TEST(Inventory, NonPositiveTimeoutIsAnError) {
  EXPECT_EQ(Error(std::string(kOneNode) + "[ssh]\nconnect_timeout_s = 0\n"),
            "pod.toml:4:21: ssh.connect_timeout_s: must be a finite number > 0");
  EXPECT_THAT(Error(std::string(kOneNode) + "[ssh]\nkeepalive_s = nan\n"),
              HasSubstr("ssh.keepalive_s: must be a finite number > 0"));
}

TEST(Inventory, UnknownTransportIsAnError) {
  EXPECT_EQ(Error("transport = \"rsh\"\n" + std::string(kOneNode)),
            "pod.toml:1:13: transport: 'rsh' is not a transport (ssh, local, slurm)");
}

TEST(Inventory, AddressOnAMultiHostEntryIsAnError) {
  EXPECT_EQ(Error("[[nodes]]\nname = \"n[1-2]\"\naddress = \"10.0.0.1\"\n"),
            "pod.toml:3:11: nodes[0].address: an address needs a single node, "
            "but 'n[1-2]' expands to 2 nodes");
}

TEST(Inventory, AddressInAGroupIsAnError) {
  EXPECT_EQ(Error("[[groups]]\nname = \"a\"\nnodes = [\"n1\"]\n"
                  "address = \"10.0.0.1\"\n"),
            "pod.toml:4:1: groups[0].address: an address belongs to one host: "
            "set it in a [[nodes]] entry");
}

TEST(Inventory, UnknownStageInRunIsAnError) {
  EXPECT_THAT(Error(std::string(kOneNode) + "[stages]\nrun = [\"facts\", \"nccl2\"]\n"),
              StartsWith("pod.toml:4:17: stages.run[1]: unknown stage 'nccl2' (did you "
                         "mean 'nccl'?); known stages: facts, parity, health, nics, ports, "
                         "nccl, mpi"));
}

TEST(Inventory, UnknownStageTableIsAnError) {
  EXPECT_EQ(Error(std::string(kOneNode) + "[stages.ncc]\niters = 2\n"),
            "pod.toml:3:9: stages.ncc: unknown stage (did you mean 'nccl'?)");
}

TEST(Inventory, StageListedTwiceIsAnError) {
  EXPECT_EQ(Error(std::string(kOneNode) + "[stages]\nrun = [\"facts\", \"facts\"]\n"),
            "pod.toml:4:17: stages.run[1]: stage 'facts' is listed twice");
}

TEST(Inventory, UnknownStageKeyListsTheKnownOnes) {
  EXPECT_THAT(Error(std::string(kOneNode) + "[stages.nccl]\niter = 3\n"),
              StartsWith("pod.toml:4:1: stages.nccl.iter: unknown key (did you "
                         "mean 'iters'?); stage 'nccl' knows sizes, iters"));
}

TEST(Inventory, BadStageValueIsLocated) {
  EXPECT_EQ(Error(std::string(kOneNode) + "[stages.nccl]\niters = 0\n"),
            "pod.toml:4:9: stages.nccl.iters: expected an integer >= 1, got 0");
  EXPECT_THAT(Error(std::string(kOneNode) + "[stages.ports]\nports = [22, \"9-3\"]\n"),
              StartsWith("pod.toml:4:9: stages.ports.ports: [1]: bad port range "
                         "'9-3'"));
}

TEST(Inventory, ExpectRefusesTablesAndBooleans) {
  EXPECT_EQ(Error(std::string(kOneNode) + "[expect]\ndriver = true\n"),
            "pod.toml:4:10: expect.driver: expected a string or a number, got "
            "a boolean");
}

TEST(Inventory, BadEnvNameIsAnError) {
  EXPECT_EQ(Error("[defaults]\nenv = { \"A-B\" = \"1\" }\n" + std::string(kOneNode)),
            "pod.toml:2:9: defaults.env.A-B: not a valid environment variable "
            "name");
}

TEST(Inventory, TomlSyntaxErrorIsLocated) {
  EXPECT_THAT(Error("name = \"x\nport = 1\n"), StartsWith("pod.toml:1:"));
  EXPECT_THAT(Error("[[nodes]]\nname = \"n1\"\nname = \"n2\"\n"), StartsWith("pod.toml:3:"));
  EXPECT_THAT(Error("[[nodes]\n"), HasSubstr("TOML syntax error: "));
}

TEST(Inventory, SeveralErrorsAreReportedInFileOrder) {
  std::string msg = Error("zzz = 1\n[ssh]\nport = 0\n[[nodes]]\nname = \"n[2-1]\"\n");
  EXPECT_EQ(msg,
            "pod.toml:1:1: zzz: unknown key\n"
            "pod.toml:3:8: ssh.port: 0 is out of range (must be in 1..65535)\n"
            "pod.toml:5:8: nodes[0].name: bad hostlist 'n[2-1]': range 2-1 is "
            "reversed at position 3");
}

TEST(Inventory, StringsWithoutAPathAreNamedInMessages) {
  Result<Inventory> r = ParseInventory("x = 1\n", "");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), StartsWith("<inventory>:1:1: x: "));
}

TEST(Inventory, UnreadableFileNamesThePath) {
  Result<Inventory> r = LoadInventory("/nonexistent/pod.toml", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kBadInventory);
  EXPECT_EQ(r.status().message(),
            "/nonexistent/pod.toml: cannot read inventory: No such file or "
            "directory; to describe a cluster, copy inventories/example.toml and "
            "edit it (inventories/local.toml checks this machine alone)");
  r = LoadInventory("/tmp", {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("/tmp: cannot read inventory: "
                                              "not a regular file"));
}

TEST(Inventory, NodesFromUnsetEnvironmentVariableIsAnError) {
  EXPECT_EQ(Error("nodes_from_env = \"SLURM_JOB_NODELIST\"\n",
                  EnvironmentOf({{"SLURM_NODELIST", "sn[01-03]"}})),
            "pod.toml:1:18: nodes_from_env: environment variable "
            "SLURM_JOB_NODELIST is not set");
}

// --- what a good inventory turns into ---

TEST(Inventory, OverridesFollowDefaultsThenGroupThenNode) {
  Inventory inv = Parse(R"([ssh]
user = "ops"
port = 22
identity = "~/.ssh/id"
[defaults]
user = "dflt"
gpus = 8
env = { A = "defaults", B = "defaults" }
library_paths = ["/d"]
[[nodes]]
name = "n2"
port = 2222
env = { B = "node" }
[[groups]]
name = "g"
nodes = ["n[1-3]"]
user = "group"
env = { A = "group" }
library_paths = ["/g"]
[[nodes]]
name = "x1"
address = "10.0.0.9"
)");
  ASSERT_EQ(inv.nodes.size(), 4u);
  const Node* n1 = inv.FindNode("n1");
  const Node* n2 = inv.FindNode("n2");
  const Node* x1 = inv.FindNode("x1");
  ASSERT_TRUE(n1 && n2 && x1);
  EXPECT_EQ(n1->group, "g");
  EXPECT_EQ(n1->ssh.user, "group");
  EXPECT_EQ(n1->ssh.port, 22);
  EXPECT_EQ(n1->ssh.identity, "~/.ssh/id");
  EXPECT_EQ(n1->gpus, 8);
  EXPECT_EQ(n1->address, "n1");
  EXPECT_EQ(n1->library_paths, std::vector<std::string>{"/g"});
  EXPECT_EQ(n1->env, (std::map<std::string, std::string>{{"A", "group"}, {"B", "defaults"}}));
  // The [[nodes]] entry stands before the group in the file and still wins.
  EXPECT_EQ(n2->group, "g");
  EXPECT_EQ(n2->ssh.port, 2222);
  EXPECT_EQ(n2->ssh.user, "group");
  EXPECT_EQ(n2->env, (std::map<std::string, std::string>{{"A", "group"}, {"B", "node"}}));
  EXPECT_EQ(x1->group, "");
  EXPECT_EQ(x1->address, "10.0.0.9");
  EXPECT_EQ(x1->ssh.user, "dflt");
  EXPECT_EQ(x1->library_paths, std::vector<std::string>{"/d"});
  EXPECT_EQ(x1->root, "/");
  // The inventory-wide [ssh] is untouched by overrides.
  EXPECT_EQ(inv.ssh.user, "ops");
}

TEST(Inventory, NodesKeepFileOrder) {
  Inventory inv = Parse(
      "[[nodes]]\nname = \"head\"\n[[groups]]\nname = \"g\"\n"
      "nodes = [\"b[1-2]\", \"a[1-2]\"]\n[[nodes]]\nname = \"a2\"\n"
      "[[nodes]]\nname = \"tail\"\n");
  std::vector<std::string> names;
  for (const Node& n : inv.nodes) names.push_back(n.name);
  EXPECT_EQ(names, (std::vector<std::string>{"head", "b1", "b2", "a1", "a2", "tail"}));
  EXPECT_EQ(inv.FindNode("b2")->line, 5);
  EXPECT_EQ(inv.FindNode("tail")->line, 9);
}

TEST(Inventory, GroupHostlistsExpand) {
  Inventory inv = Parse(
      "[[groups]]\nname = \"rack\"\n"
      "nodes = [\"gpu[001-016]\", \"r[1-2]n[01-02]\"]\n");
  ASSERT_EQ(inv.nodes.size(), 20u);
  EXPECT_EQ(inv.nodes[0].name, "gpu001");
  EXPECT_EQ(inv.nodes[15].name, "gpu016");
  EXPECT_EQ(inv.nodes[16].name, "r1n01");
  EXPECT_EQ(inv.nodes[19].name, "r2n02");
  for (const Node& n : inv.nodes) EXPECT_EQ(n.group, "rack");
}

TEST(Inventory, StageSettingsBecomeJson) {
  Inventory inv = Parse(std::string(kOneNode) + R"([stages]
run = ["facts", "nccl"]
[stages.facts]
timeout_s = 30
[stages.ports]
ports = [22, "29500-29510"]
[stages.nccl]
sizes = "8-256M"
iters = 20
require_gdrdma = true
env = { NCCL_DEBUG = "INFO" }
)");
  EXPECT_EQ(inv.stages, (std::vector<std::string>{"facts", "nccl"}));
  nlohmann::json facts = inv.StageSettings("facts");
  ASSERT_TRUE(facts["timeout_s"].is_number_float());  // an int made double
  EXPECT_EQ(facts["timeout_s"].get<double>(), 30.0);
  EXPECT_EQ(inv.StageSettings("ports")["ports"], nlohmann::json::parse(R"([22, "29500-29510"])"));
  EXPECT_EQ(inv.StageSettings("nccl"), nlohmann::json::parse(R"({"sizes": "8-256M", "iters": 20,
              "require_gdrdma": true, "env": {"NCCL_DEBUG": "INFO"}})"));
  EXPECT_EQ(inv.StageSettings("mpi"), nlohmann::json::object());
}

TEST(Inventory, ExpectPinsBecomeStrings) {
  Inventory inv = Parse(std::string(kOneNode) + R"([expect]
driver = "550.54.15"
nccl = ">=2.18"
gpu_count = 8
cuda_driver = 12.4
)");
  EXPECT_EQ(inv.expect, (std::map<std::string, std::string>{{"driver", "550.54.15"},
                                                            {"nccl", ">=2.18"},
                                                            {"gpu_count", "8"},
                                                            {"cuda_driver", "12.4"}}));
}

TEST(Inventory, SshSettingsAreRead) {
  Inventory inv = Parse(R"(name = "pod-z"
transport = "local"
[ssh]
host_key_policy = "accept-new"
fanout = 8
connect_timeout_s = 2.5
command_timeout_s = 30
agent_dir = "/tmp/cc"
)" + std::string(kOneNode));
  EXPECT_EQ(inv.name, "pod-z");
  EXPECT_EQ(inv.transport, "local");
  EXPECT_EQ(inv.ssh.host_key_policy, "accept-new");
  EXPECT_EQ(inv.ssh.fanout, 8);
  EXPECT_EQ(inv.ssh.connect_timeout_s, 2.5);
  EXPECT_EQ(inv.ssh.command_timeout_s, 30.0);
  EXPECT_EQ(inv.ssh.keepalive_s, 15.0);  // default kept
  EXPECT_EQ(inv.ssh.agent_dir, "/tmp/cc");
  EXPECT_EQ(inv.nodes[0].ssh.host_key_policy, "accept-new");
}

TEST(Inventory, NameDefaultsToTheFileStem) {
  Result<Inventory> r = ParseInventory(kOneNode, "/etc/cc/pod-b.toml");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->name, "pod-b");
  EXPECT_EQ(r->path, "/etc/cc/pod-b.toml");
}

TEST(Inventory, Sha256IsOfTheFileBytes) {
  Inventory a = Parse(kOneNode);
  // printf '[[nodes]]\nname = "n1"\n' | sha256sum
  EXPECT_EQ(a.sha256, "cc5a4f10391ac1e5c8810ea72e4a2d44c84c8aed5c7728ffe8cc1f9bdb4556e4");
  Inventory b = Parse(std::string(kOneNode) + "# a comment\n");
  EXPECT_NE(a.sha256, b.sha256);
  EXPECT_EQ(a.sha256.size(), 64u);
}

TEST(Inventory, NodesFromEnvironment) {
  Inventory inv = Parse(R"(nodes_from_env = "CC_TEST_NODELIST"
[[groups]]
name = "g"
nodes = ["sn03"]
gpus = 2
[[nodes]]
name = "sn02"
address = "10.1.1.2"
)",
                        EnvironmentOf({{"CC_TEST_NODELIST", "sn[01-03]"}}));
  ASSERT_EQ(inv.nodes.size(), 3u);
  EXPECT_EQ(inv.nodes[0].name, "sn01");
  EXPECT_EQ(inv.nodes[1].address, "10.1.1.2");
  EXPECT_EQ(inv.nodes[2].group, "g");
  EXPECT_EQ(inv.nodes[2].gpus, 2);
}

TEST(Inventory, NodesFromSlurmJobNodelistInSlurmsHostlistSyntax) {
  // As Slurm sets it: zero-padded ranges, lists inside brackets, several
  // prefixes, a plain name.
  Inventory inv =
      Parse("nodes_from_env = \"SLURM_JOB_NODELIST\"\n",
            EnvironmentOf({{"SLURM_JOB_NODELIST", "gpu[001-002,010],dgx-a[7-8],login1"}}));
  std::vector<std::string> names;
  for (const Node& n : inv.nodes) names.push_back(n.name + "@" + n.address);
  EXPECT_THAT(names, ::testing::ElementsAre("gpu001@gpu001", "gpu002@gpu002", "gpu010@gpu010",
                                            "dgx-a7@dgx-a7", "dgx-a8@dgx-a8", "login1@login1"));
}

TEST(Inventory, NodesFromAnEmptyEnvironmentVariableIsAnError) {
  std::string msg = Error("nodes_from_env = \"CC_TEST_EMPTY_NODELIST\"\n",
                          EnvironmentOf({{"CC_TEST_EMPTY_NODELIST", ""}}));
  EXPECT_EQ(msg,
            "pod.toml:1:18: nodes_from_env: environment variable "
            "CC_TEST_EMPTY_NODELIST is empty");
}

TEST(Inventory, NodesFromEnvironmentWithBadHostlist) {
  std::string msg = Error("nodes_from_env = \"CC_TEST_BAD_NODELIST\"\n",
                          EnvironmentOf({{"CC_TEST_BAD_NODELIST", "sn[3-1]"}}));
  EXPECT_EQ(msg,
            "pod.toml:1:18: nodes_from_env: bad hostlist in "
            "$CC_TEST_BAD_NODELIST 'sn[3-1]': range 3-1 is reversed at "
            "position 4");
}

TEST(Inventory, NodesFromEnvironmentReadOnlyTheEnvironmentItIsGiven) {
  const std::string toml = "nodes_from_env = \"PATH\"\n";
  // PATH is set in this process, but an inventory parsed without an
  // environment sees none.
  EXPECT_THAT(Error(toml), HasSubstr("environment variable PATH is not set"));
  EXPECT_EQ(Parse(toml, EnvironmentOf({{"PATH", "n[1-2]"}})).nodes.size(), 2u);
}

TEST(ProcessEnvironment, IsGetenv) {
  ASSERT_NE(std::getenv("PATH"), nullptr);
  EXPECT_EQ(ProcessEnvironment("PATH"), std::string(std::getenv("PATH")));
  EXPECT_EQ(ProcessEnvironment("CC_TEST_NEVER_SET_ANYWHERE"), std::nullopt);
}

TEST(LimitNodes, KeepsOnlyTheNamedNodesInInventoryOrder) {
  Inventory inv = Parse("[[groups]]\nname = \"g\"\nnodes = [\"n[1-6]\"]\n");
  ASSERT_TRUE(LimitNodes(inv, "n5,n[1-2]").ok());
  ASSERT_EQ(inv.nodes.size(), 3u);
  EXPECT_EQ(inv.nodes[0].name, "n1");
  EXPECT_EQ(inv.nodes[2].name, "n5");
}

TEST(LimitNodes, NamesTheUnknownNodes) {
  Inventory inv = Parse("[[groups]]\nname = \"g\"\nnodes = [\"n[1-6]\"]\n");
  Status s = LimitNodes(inv, "n[5-9]");
  EXPECT_EQ(s.kind(), ErrorKind::kBadArgument);
  EXPECT_EQ(s.message(), "not in inventory pod.toml: n[7-9]");
  EXPECT_EQ(inv.nodes.size(), 6u);  // untouched on error
  s = LimitNodes(inv, "n[");
  EXPECT_THAT(s.message(), StartsWith("bad node list 'n[': unclosed '['"));
}

// --- the shipped inventories are the documentation; they must parse ---

std::string SourceFile(const std::string& rel) {
  return std::string(CLUSTERCHECK_SOURCE_DIR) + "/" + rel;
}

TEST(ShippedInventories, LocalParses) {
  Result<Inventory> r = LoadInventory(SourceFile("inventories/local.toml"), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->transport, "local");
  // Two "nodes" on loopback addresses, so that the pair stages have a pair;
  // every stage, so that `make run` shows the whole pipeline (issue 18).
  ASSERT_EQ(r->nodes.size(), 2u);
  EXPECT_EQ(r->nodes[0].address, "127.0.0.11");
  EXPECT_EQ(r->nodes[1].address, "127.0.0.12");
  EXPECT_EQ(r->stages, (std::vector<std::string>{"facts", "parity", "health", "nics", "ports",
                                                 "nccl", "mpi"}));
}

TEST(ShippedInventories, ExampleParsesAndShowsEveryFeature) {
  Result<Inventory> r = LoadInventory(SourceFile("inventories/example.toml"), {});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const Inventory& inv = *r;
  ASSERT_EQ(inv.nodes.size(), 16u);
  EXPECT_EQ(inv.nodes.front().name, "gpu001");
  EXPECT_EQ(inv.nodes.back().name, "gpu016");
  EXPECT_EQ(inv.FindNode("gpu007")->address, "10.0.0.107");
  EXPECT_EQ(inv.FindNode("gpu007")->ssh.port, 2222);
  EXPECT_EQ(inv.FindNode("gpu016")->gpus, 3);
  EXPECT_EQ(inv.FindNode("gpu015")->gpus, 4);
  EXPECT_EQ(inv.FindNode("gpu015")->ssh.user, "admin");
  EXPECT_EQ(inv.FindNode("gpu001")->ssh.user, "ops");
  EXPECT_FALSE(inv.expect.empty());
  for (const char* stage : {"facts", "parity", "health", "nics", "ports", "nccl", "mpi"}) {
    EXPECT_FALSE(inv.StageSettings(stage).empty()) << stage;
  }
}

}  // namespace
}  // namespace cc
