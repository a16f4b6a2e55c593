// The upload over a command channel, run by a real sh on this machine
// (LocalConnection), so the script itself is what is tested.
#include "orchestrator/transport/shell_upload.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "orchestrator/transport/framed_command.h"
#include "orchestrator/transport/local_transport.h"
#include "orchestrator/transport/sha256.h"

namespace cc {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ShellUploadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-shell-upload-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
  LocalConnection conn_;
};

TEST_F(ShellUploadTest, StoresExactBytesWithModeAndMakesPrivateParents) {
  std::string content;
  for (int i = 0; i < 200000; ++i) content += static_cast<char>(i % 251);
  content += std::string("\0\n'\"$(x)", 8);
  std::string path = dir_ + "/a b/c/agent-1";
  Status s = UploadThroughShell(conn_, content, path, 0755, Deadline::InSeconds(20));
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(ReadFile(path) == content);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  ASSERT_EQ(stat((dir_ + "/a b").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  // Over an existing file, and no temporary file left beside it.
  ASSERT_TRUE(UploadThroughShell(conn_, "v2", path, 0600, Deadline::InSeconds(20)).ok());
  EXPECT_EQ(ReadFile(path), "v2");
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/a b/c")) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  auto size = FileSizeThroughShell(conn_, path, Deadline::InSeconds(20));
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, 2);
  EXPECT_TRUE(FileSizeThroughShell(conn_, dir_ + "/none", Deadline::InSeconds(20))
                  .status()
                  .Is(ErrorKind::kNotFound));
}

TEST_F(ShellUploadTest, AGarbledTransferNeverTakesTheName) {
  std::string path = dir_ + "/agent-2";
  std::string sent = "the agent";
  // The script expects the checksum of other bytes: as if the stream had
  // been garbled on the way.
  std::string script =
      ShellUploadScript(path, 0755, static_cast<long long>(sent.size()), Sha256Hex("the agenT"));
  auto run = RunFramed(conn_, script, Deadline::InSeconds(20), sent);
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(run.status().Is(ErrorKind::kIo)) << run.status().ToString();
  EXPECT_NE(run.status().message().find("received sha256"), std::string::npos)
      << run.status().ToString();
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir_)) << "the temporary file was left";
  // A short transfer is caught by its size.
  script = ShellUploadScript(path, 0755, 100, Sha256Hex(sent));
  run = RunFramed(conn_, script, Deadline::InSeconds(20), sent);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("received 9 bytes of 100"), std::string::npos)
      << run.status().ToString();
}

}  // namespace
}  // namespace cc
