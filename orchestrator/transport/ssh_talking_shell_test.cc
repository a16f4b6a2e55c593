// SshTransport against an sshd whose sessions print a banner before every
// command (tests/unit/sshd_fixture.h, Start(shell_banner)): clustercheck's
// framed commands still read exactly their output, and uploads still work
// although the banner garbles SFTP. Skipped when not root or without sshd.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "orchestrator/transport/agent_channel.h"
#include "orchestrator/transport/framed_command.h"
#include "orchestrator/transport/sha256.h"
#include "orchestrator/transport/ssh_transport.h"
#include "tests/unit/sshd_fixture.h"

namespace cc {
namespace {

using testing::SshdFixture;

constexpr const char* kBanner = "Welcome to the Example HPC Center\nYou have mail.";

Deadline Generous() { return Deadline::In(Millis(30000)); }

class SshTalkingShellTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = new std::string(SshdFixture::WhyTalkingShellUnavailable());
    if (!skip_->empty()) return;
    sshd_ = new SshdFixture();
    start_error_ = new std::string(sshd_->Start(kBanner));
  }
  static void TearDownTestSuite() {
    delete sshd_;
    delete skip_;
    delete start_error_;
    sshd_ = nullptr;
    skip_ = start_error_ = nullptr;
  }
  void SetUp() override {
    if (!skip_->empty()) GTEST_SKIP() << *skip_;
    ASSERT_TRUE(start_error_->empty()) << *start_error_;
    Node n;
    n.name = "talker";
    n.address = "127.0.0.1";
    n.ssh.user = "root";
    n.ssh.port = sshd_->port();
    n.ssh.identity = sshd_->client_key();
    n.ssh.known_hosts = sshd_->WriteFile("known_hosts", sshd_->KnownHostsLine() + "\n");
    n.ssh.config_file = sshd_->WriteFile("empty_config", "");
    n.ssh.connect_timeout_s = 5;
    auto c = SshTransport().Connect(n, Generous());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    conn_ = std::move(*c);
  }
  std::string Remote(const std::string& name) const { return sshd_->dir() + "/" + name; }

  static std::string* skip_;
  static std::string* start_error_;
  static SshdFixture* sshd_;
  std::unique_ptr<Connection> conn_;
};

std::string* SshTalkingShellTest::skip_ = nullptr;
std::string* SshTalkingShellTest::start_error_ = nullptr;
SshdFixture* SshTalkingShellTest::sshd_ = nullptr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(SshTalkingShellTest, AnUnframedCommandReallySeesTheBanner) {
  // The fault is real: this is what `uname -m` used to be read from.
  auto out = RunToCompletion(*conn_, {{"uname", "-m"}, {}}, Generous());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->rfind("Welcome to the Example HPC Center\n", 0), 0u) << *out;
}

TEST_F(SshTalkingShellTest, AFramedCommandReadsItsOwnOutputAndKeepsTheBannerApart) {
  auto run = RunFramed(*conn_, "echo x86_64; printf 'no newline'", Generous());
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  EXPECT_EQ(run->output, "x86_64\nno newline");
  EXPECT_EQ(run->shell_noise, kBanner);
  EXPECT_GT(run->startup_s, 0.0);
  EXPECT_LT(run->startup_s, 30.0);
}

TEST_F(SshTalkingShellTest, AFramedCommandThatFailsSaysSoWithItsStderr) {
  auto run = RunFramed(*conn_, "echo half; echo broken >&2; exit 4", Generous());
  ASSERT_FALSE(run.ok());
  EXPECT_TRUE(run.status().Is(ErrorKind::kIo)) << run.status().ToString();
  EXPECT_NE(run.status().message().find("exited with 4: broken"), std::string::npos)
      << run.status().ToString();
}

TEST_F(SshTalkingShellTest, UploadFallsBackFromSftpToTheShellAndKeepsTheContentExact) {
  std::string content;
  for (int i = 0; i < 300000; ++i) content += static_cast<char>((i * 7919) & 0xff);
  std::string path = Remote("sub/dir/agent-0123");
  auto t0 = std::chrono::steady_clock::now();
  Status up = conn_->Upload(content, path, 0755, Generous());
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(up.ok()) << up.ToString();
  EXPECT_LT(took, 10.0) << "the failed SFTP handshake must not eat the deadline";
  EXPECT_TRUE(ReadFile(path) == content);
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  ASSERT_EQ(stat(Remote("sub").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  // Again over an existing file (the rename replaces it), and its size.
  ASSERT_TRUE(conn_->Upload("v2", path, 0644, Generous()).ok());
  EXPECT_EQ(ReadFile(path), "v2");
  auto size = conn_->FileSize(path, Generous());
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, 2);
  EXPECT_TRUE(conn_->FileSize(Remote("absent"), Generous()).status().Is(ErrorKind::kNotFound));
}

TEST_F(SshTalkingShellTest, TheAgentsHelloIsFoundAfterTheBannerWhichIsKept) {
  std::string hello = protocol::MakeHello("0.1.0", "x86_64", 1, "talker").dump();
  auto p = conn_->Start({{"sh", "-c", "echo '" + hello + "'; cat >/dev/null"}, {}}, Generous());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  AgentChannel agent(std::move(*p));
  auto h = agent.ReadHello(Generous());
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(agent.preamble(), std::string(kBanner) + "\n");
}

}  // namespace
}  // namespace cc
