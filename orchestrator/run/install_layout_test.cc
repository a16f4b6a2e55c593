#include "orchestrator/run/install_layout.h"

#include <gtest/gtest.h>

#include <set>

namespace cc {
namespace {

// A file system that holds exactly `files`.
std::function<bool(const std::string&)> Holding(std::set<std::string> files) {
  return [files](const std::string& p) { return files.count(p) > 0; };
}

TEST(InstallLayout, BuildTreeFindsTheAgentBesideTheController) {
  EXPECT_EQ(HelperPath("/work/cc/build", "clustercheck-agent",
                       Holding({"/work/cc/build/clustercheck-agent"})),
            "/work/cc/build/clustercheck-agent");
}

TEST(InstallLayout, InstalledControllerFindsTheAgentInLibClustercheck) {
  EXPECT_EQ(HelperPath("/usr/bin", "clustercheck-agent",
                       Holding({"/usr/lib/clustercheck/clustercheck-agent"})),
            "/usr/lib/clustercheck/clustercheck-agent");
  EXPECT_EQ(HelperPath("/opt/cc/bin/", "clustercheck-mpi-probe",
                       Holding({"/opt/cc/lib/clustercheck/clustercheck-mpi-probe"})),
            "/opt/cc/lib/clustercheck/clustercheck-mpi-probe");
}

TEST(InstallLayout, ProgramsSideBySideWinOverTheInstalledLayout) {
  EXPECT_EQ(HelperPath("/usr/local/bin", "clustercheck-agent",
                       Holding({"/usr/local/bin/clustercheck-agent",
                                "/usr/local/lib/clustercheck/clustercheck-agent"})),
            "/usr/local/bin/clustercheck-agent");
}

TEST(InstallLayout, AHelperMissingFromAnInstallIsNamedWhereTheInstallPutsIt) {
  EXPECT_EQ(
      HelperPath("/usr/bin", "clustercheck-agent", Holding({"/usr/bin", "/usr/lib/clustercheck"})),
      "/usr/lib/clustercheck/clustercheck-agent");
}

TEST(InstallLayout, AHelperMissingOutsideAnInstallIsNamedBesideTheController) {
  EXPECT_EQ(HelperPath("/tmp/x/bin", "clustercheck-nccl-mpi", Holding({"/tmp/x/bin"})),
            "/tmp/x/bin/clustercheck-nccl-mpi");
  EXPECT_EQ(HelperPath("/work/cc/build", "clustercheck-agent", Holding({})),
            "/work/cc/build/clustercheck-agent");
}

TEST(InstallLayout, OnlyADirectoryNamedBinHasAnInstalledSibling) {
  EXPECT_EQ(HelperDirectories("/work/cc/build"), std::vector<std::string>{"/work/cc/build"});
  EXPECT_EQ(HelperDirectories("/work/robin"), std::vector<std::string>{"/work/robin"});
  EXPECT_EQ(HelperDirectories("/bin"), (std::vector<std::string>{"/bin", "/lib/clustercheck"}));
}

}  // namespace
}  // namespace cc
