#include "orchestrator/transport/ssh_sftp.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

using Dirs = std::vector<std::string>;

TEST(SshSftpPath, TildeMeansTheSftpStartDirectory) {
  EXPECT_EQ(SftpPath("~/.cache/clustercheck/agent-ab12"), ".cache/clustercheck/agent-ab12");
  EXPECT_EQ(SftpPath("~"), ".");
  EXPECT_EQ(SftpPath("/opt/cc/agent"), "/opt/cc/agent");
  EXPECT_EQ(SftpPath("~other/x"), "~other/x");
}

TEST(SshSftpPath, ParentDirectoriesComeOutermostFirst) {
  EXPECT_EQ(ParentDirectories("a/b/c"), (Dirs{"a", "a/b"}));
  EXPECT_EQ(ParentDirectories("/x/y/z"), (Dirs{"/x", "/x/y"}));
  EXPECT_EQ(ParentDirectories("file"), Dirs{});
  EXPECT_EQ(ParentDirectories("/file"), Dirs{});
  EXPECT_EQ(ParentDirectories("./a//b"), (Dirs{"./a"}));
}

}  // namespace
}  // namespace cc
