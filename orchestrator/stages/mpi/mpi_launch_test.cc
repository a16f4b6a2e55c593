#include "orchestrator/stages/mpi/mpi_launch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cc {
namespace {

using ::testing::HasSubstr;

std::vector<MpiHost> TwoHosts() {
  SshSettings a;
  a.user = "ops";
  a.identity = "/k/id";
  SshSettings b = a;
  b.port = 2222;
  b.user = "admin";
  return {{"gpu001", "10.0.0.1", a}, {"gpu002", "10.0.0.2", b}};
}

TEST(MpiHostfile, ListsOneSlotPerNodeInRankOrderNamingEach) {
  EXPECT_EQ(MpiHostfile(TwoHosts()),
            "# written by clustercheck's mpi stage: rank i runs on line i\n"
            "# gpu001\n10.0.0.1 slots=1\n# gpu002\n10.0.0.2 slots=1\n");
}

TEST(MpiSshConfig, CarriesEachNodesLoginAndTheInventorysHostKeyPolicy) {
  SshSettings all;
  all.known_hosts = "/k/known_hosts";
  all.host_key_policy = "accept-new";
  all.connect_timeout_s = 7;
  std::string c = MpiSshConfig(TwoHosts(), all, "/root/.ssh/config");
  EXPECT_THAT(c, HasSubstr("Host 10.0.0.1\n  User ops\n  Port 22\n  IdentityFile /k/id\n"));
  EXPECT_THAT(c, HasSubstr("Host 10.0.0.2\n  User admin\n  Port 2222\n"));
  EXPECT_THAT(c, HasSubstr("Host *\n  StrictHostKeyChecking accept-new\n"
                           "  UserKnownHostsFile /k/known_hosts\n  BatchMode yes\n"
                           "  ConnectTimeout 7\n"));
  EXPECT_THAT(c, HasSubstr("  Include /root/.ssh/config\n"));
  all.host_key_policy = "strict";
  EXPECT_THAT(MpiSshConfig(TwoHosts(), all, ""), HasSubstr("StrictHostKeyChecking yes\n"));
  EXPECT_THAT(MpiSshConfig(TwoHosts(), all, ""), ::testing::Not(HasSubstr("Include")));
}

MpirunOptions Options() {
  MpirunOptions o;
  o.mpirun = "/usr/bin/mpirun";
  o.hostfile = "/tmp/x/hostfile";
  o.ssh_config = "/tmp/x/ssh_config";
  o.np = 4;
  o.program = "/opt/cc/clustercheck-mpi-probe";
  o.program_args = {"--iters", "5"};
  return o;
}

TEST(MpirunArgv, RunsOneRankPerNodeOverTheInventorysSshOnTheChosenInterfaces) {
  MpirunOptions o = Options();
  o.btl_tcp_if_include = "10.42.0.0/24";
  o.oob_tcp_if_include = "eth0";
  o.extra_args = {"--mca", "btl", "tcp,self"};
  auto a = MpirunArgv(o);
  ASSERT_TRUE(a.ok());
  EXPECT_THAT(*a, ::testing::ElementsAre(
                      "/usr/bin/mpirun", "--hostfile", "/tmp/x/hostfile", "-np", "4", "--map-by",
                      "node", "--bind-to", "none", "--tag-output", "--mca", "plm_rsh_agent",
                      "ssh -F /tmp/x/ssh_config", "--mca", "plm_rsh_no_tree_spawn", "1", "--mca",
                      "orte_base_help_aggregate", "0", "--mca", "btl_tcp_if_include",
                      "10.42.0.0/24", "--mca", "oob_tcp_if_include", "eth0", "--mca", "btl",
                      "tcp,self", "/opt/cc/clustercheck-mpi-probe", "--iters", "5"));
}

TEST(MpirunArgv, AllowsRunningAsRootOnlyWhenRoot) {
  MpirunOptions o = Options();
  EXPECT_THAT(*MpirunArgv(o), ::testing::Not(::testing::Contains("--allow-run-as-root")));
  o.as_root = true;
  EXPECT_EQ(MpirunArgv(o)->at(1), "--allow-run-as-root");
}

TEST(MpirunArgv, LeavesInterfacesToOpenMpiWhenNoneIsChosen) {
  auto a = MpirunArgv(Options());
  EXPECT_THAT(*a, ::testing::Not(::testing::Contains("btl_tcp_if_include")));
  EXPECT_THAT(*a, ::testing::Not(::testing::Contains("oob_tcp_if_include")));
}

TEST(MpirunArgv, RefusesWhatOpenMpiWouldMisread) {
  MpirunOptions o = Options();
  o.ssh_config = "/tmp/my dir/ssh_config";
  EXPECT_THAT(MpirunArgv(o).status().message(), HasSubstr("has white space"));
  o = Options();
  o.np = 0;
  EXPECT_FALSE(MpirunArgv(o).ok());
  o = Options();
  o.program.clear();
  EXPECT_FALSE(MpirunArgv(o).ok());
}

}  // namespace
}  // namespace cc
