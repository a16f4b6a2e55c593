// SshTransport against a real sshd on loopback (tests/unit/sshd_fixture.h).
// Skipped when not root or without sshd.
#include "orchestrator/transport/ssh_transport.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/protocol.h"
#include "build_paths.h"
#include "orchestrator/transport/ssh_session.h"
#include "tests/unit/sshd_fixture.h"

namespace cc {
namespace {

using testing::SshdFixture;
namespace fs = std::filesystem;

// Deadlines for steps that should succeed are generous (a loaded CI
// machine can take seconds for a handshake); bounds on how long a failing
// step may take are its deadline plus this slack, far below a hang.
constexpr double kSlackS = 3.0;
Deadline Generous() { return Deadline::In(Millis(30000)); }

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How many of this process's descriptors are TCP sockets connected to
// 127.0.0.1:port: its open ssh sessions to the fixture's sshd.
int SocketsConnectedTo(int port) {
  int n = 0;
  for (const auto& e : fs::directory_iterator("/proc/self/fd")) {
    int fd = std::atoi(e.path().filename().c_str());
    sockaddr_in peer{};
    socklen_t len = sizeof peer;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) continue;
    if (peer.sin_family == AF_INET && ntohs(peer.sin_port) == port) ++n;
  }
  return n;
}

// A socket on 127.0.0.1 that listens (the kernel completes handshakes) but
// never accepts or writes: an sshd that hangs before its banner.
struct SilentListener {
  int fd = -1;
  int port = 0;
  SilentListener() {
    fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(fd, 16);
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    port = ntohs(a.sin_port);
  }
  ~SilentListener() { close(fd); }
};

class SshTransportTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    skip_ = new std::string(SshdFixture::WhyUnavailable());
    if (!skip_->empty()) return;
    sshd_ = new SshdFixture();
    start_error_ = new std::string(sshd_->Start());
    if (start_error_->empty()) {
      known_hosts_ =
          new std::string(sshd_->WriteFile("known_hosts", sshd_->KnownHostsLine() + "\n"));
    }
  }
  static void TearDownTestSuite() {
    delete sshd_;
    delete skip_;
    delete start_error_;
    delete known_hosts_;
    sshd_ = nullptr;
    skip_ = start_error_ = known_hosts_ = nullptr;
  }
  void SetUp() override {
    if (!skip_->empty()) GTEST_SKIP() << *skip_;
    ASSERT_TRUE(start_error_->empty()) << *start_error_;
  }

  // A node that reaches the fixture: explicit user, port, identity and
  // known_hosts, and an empty config file so the host's ~/.ssh/config and
  // /etc/ssh/ssh_config stay out of it.
  static Node FixtureNode() {
    Node n;
    n.name = "node1";
    n.address = "127.0.0.1";
    n.ssh.user = "root";
    n.ssh.port = sshd_->port();
    n.ssh.identity = sshd_->client_key();
    n.ssh.known_hosts = *known_hosts_;
    n.ssh.config_file = sshd_->WriteFile("empty_config", "");
    n.ssh.connect_timeout_s = 5;
    return n;
  }

  static std::unique_ptr<Connection> MustConnect(const Node& n) {
    auto c = SshTransport().Connect(n, Generous());
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(c).value() : nullptr;
  }

  // "SHA256:..." of the fixture's host key, as ssh-keygen prints it.
  static std::string HostFingerprint() {
    std::string cmd = "ssh-keygen -l -f " + sshd_->dir() + "/host_key.pub";
    FILE* p = popen(cmd.c_str(), "r");
    char buf[512] = {};
    fgets(buf, sizeof buf, p);
    pclose(p);
    std::istringstream in(buf);
    std::string bits, fp;
    in >> bits >> fp;
    return fp;
  }

  static std::string* skip_;
  static std::string* start_error_;
  static std::string* known_hosts_;
  static SshdFixture* sshd_;
};

std::string* SshTransportTest::skip_ = nullptr;
std::string* SshTransportTest::start_error_ = nullptr;
std::string* SshTransportTest::known_hosts_ = nullptr;
SshdFixture* SshTransportTest::sshd_ = nullptr;

TEST_F(SshTransportTest, DialBackStartsTheAgentOverSshAndItSpeaksOverItsOwnConnection) {
  Inventory inv;
  inv.ssh.dial_back = true;
  inv.ssh.dial_back_listen = "127.0.0.1";
  Node n = FixtureNode();
  n.ssh.dial_back = true;
  inv.nodes = {n};
  SshTransport t;
  Status begun = t.Begin(inv, "");
  ASSERT_TRUE(begun.ok()) << begun.ToString();
  ASSERT_EQ(t.LauncherMeta()["launcher"], "ssh");
  std::string dial = t.LauncherMeta()["dial_back"];
  auto c = t.Connect(inv.nodes[0], Generous());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // An ordinary command still runs over the channel.
  auto out = RunToCompletion(**c, {{"echo", "plain"}, {}}, Generous());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "plain\n");
  EXPECT_EQ(SocketsConnectedTo(sshd_->port()), 1);
  // The agent answers over the connection it dialled, and the ssh session
  // that started it is closed: the agent outlives it.
  auto p = (*c)->Start({{CLUSTERCHECK_BINARY_DIR "/clustercheck-agent"}, {}, true}, Generous());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(SocketsConnectedTo(sshd_->port()), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto line = (*p)->ReadLine(Generous());
  ASSERT_TRUE(line.ok()) << line.status().ToString() << " " << (*p)->StderrSoFar();
  auto msg = protocol::ParseMessage(*line);
  ASSERT_TRUE(msg.ok()) << *line;
  EXPECT_TRUE(protocol::CheckHello(*msg).ok()) << *line;
  // What comes next opens a session again.
  auto again = RunToCompletion(**c, {{"echo", "again"}, {}}, Generous());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, "again\n");
  (*p)->CloseStdin();
  while ((*p)->ReadLine(Generous()).ok()) {
  }
  auto code = (*p)->Wait(Generous());
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 0);
  EXPECT_EQ(t.LauncherMeta()["refused"].size(), 0u) << dial;
}

TEST_F(SshTransportTest, AnAutoDialBackAgentThatCannotDialIsStartedOverSshWithAWarning) {
  Inventory inv;
  inv.ssh.dial_back = inv.ssh.dial_back_auto = true;  // as past kDialBackAboveNodes
  inv.ssh.dial_back_listen = "127.0.0.1";
  Node n = FixtureNode();
  n.ssh.dial_back = n.ssh.dial_back_auto = true;
  inv.nodes = {n};
  SshTransport t;
  ASSERT_TRUE(t.Begin(inv, "").ok());
  auto c = t.Connect(inv.nodes[0], Generous());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // An "agent" that ignores --connect: it leaves its ssh command and never
  // dials, as one behind a firewall would look from here.
  CommandLine agent{{"sh", "-c", "echo over-ssh; sleep 1", "agent"}, {}, true};
  auto t0 = std::chrono::steady_clock::now();
  auto p = (*c)->Start(agent, Deadline::In(Millis(4000)));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_LT(SecondsSince(t0), 4.0) << "the dial back took all the time";
  auto line = (*p)->ReadLine(Generous());
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  EXPECT_EQ(*line, "over-ssh");
  ASSERT_EQ((*c)->Warnings().size(), 1u);
  EXPECT_NE((*c)->Warnings()[0].find("did not dial back"), std::string::npos)
      << (*c)->Warnings()[0];
  EXPECT_EQ(t.LauncherMeta()["over_ssh"], 1);
  EXPECT_NE(t.LauncherMeta().value("dial_back_chosen", "").find("more than 128 nodes"),
            std::string::npos)
      << t.LauncherMeta().dump();
  (*p)->Wait(Generous());
}

TEST_F(SshTransportTest, WithoutDialBackThereIsNoListenerAndNoLauncherMeta) {
  Inventory inv;
  inv.nodes = {FixtureNode()};
  SshTransport t;
  ASSERT_TRUE(t.Begin(inv, "").ok());
  EXPECT_TRUE(t.LauncherMeta().is_null());
}

TEST_F(SshTransportTest, RunsACommandAndReportsOutputStderrAndExitCode) {
  auto c = MustConnect(FixtureNode());
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->Describe(), "ssh root@127.0.0.1:" + std::to_string(sshd_->port()));
  EXPECT_TRUE(c->Warnings().empty());
  Deadline d = Generous();
  auto p = c->Start({{"sh", "-c", "echo hi; echo oops >&2; exit 3"}, {}}, d);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  (*p)->CloseStdin();
  auto line = (*p)->ReadLine(d);
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  EXPECT_EQ(*line, "hi");
  EXPECT_TRUE((*p)->ReadLine(d).status().Is(ErrorKind::kEof));
  auto code = (*p)->Wait(d);
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 3);
  EXPECT_NE((*p)->StderrSoFar().find("oops"), std::string::npos);
}

TEST_F(SshTransportTest, StdinRoundTripsThroughCatEvenWhenLargerThanTheWindow) {
  auto c = MustConnect(FixtureNode());
  ASSERT_NE(c, nullptr);
  Deadline d = Generous();
  auto p = c->Start({{"cat"}, {}}, d);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  std::string input;
  const int kLines = 40000;  // ~1.2 MB, many times the channel window
  for (int i = 0; i < kLines; ++i) input += "line " + std::to_string(i) + " xxxxxxxxxxxxxxxxx\n";
  Status w = (*p)->WriteStdin(input, d);
  ASSERT_TRUE(w.ok()) << w.ToString();
  (*p)->CloseStdin();
  std::string echoed;
  int lines = 0;
  for (;;) {
    auto line = (*p)->ReadLine(d);
    if (!line.ok()) {
      ASSERT_TRUE(line.status().Is(ErrorKind::kEof)) << line.status().ToString();
      break;
    }
    echoed += *line + "\n";
    ++lines;
  }
  EXPECT_EQ(lines, kLines);
  EXPECT_TRUE(echoed == input);
  auto code = (*p)->Wait(d);
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 0);
}

TEST_F(SshTransportTest, PassesEnvironmentVariablesThroughTheEnvPrefix) {
  auto c = MustConnect(FixtureNode());
  ASSERT_NE(c, nullptr);
  auto out = RunToCompletion(
      *c, {{"sh", "-c", "echo \"$CC_A|$CC_B\""}, {{"CC_A", "a b'c"}, {"CC_B", "$HOME"}}},
      Generous());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "a b'c|$HOME\n");
}

TEST_F(SshTransportTest, DeadlineOnASleepingCommandTimesOutQuickly) {
  auto c = MustConnect(FixtureNode());
  ASSERT_NE(c, nullptr);
  auto p = c->Start({{"sleep", "100"}, {}}, Generous());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto t0 = std::chrono::steady_clock::now();
  auto line = (*p)->ReadLine(Deadline::In(Millis(500)));
  EXPECT_TRUE(line.status().Is(ErrorKind::kTimeout)) << line.status().ToString();
  EXPECT_LT(SecondsSince(t0), 0.5 + kSlackS);
  t0 = std::chrono::steady_clock::now();
  auto code = (*p)->Wait(Deadline::In(Millis(300)));
  EXPECT_TRUE(code.status().Is(ErrorKind::kTimeout)) << code.status().ToString();
  EXPECT_LT(SecondsSince(t0), 0.3 + kSlackS);
  (*p)->Kill();
  (*p)->Kill();  // idempotent
  // sshd honours the KILL signal request for ordinary users (137) but
  // refuses it for root logins; then the channel we closed ends with or
  // without sshd's exit status, depending on timing. Either way Wait keeps
  // its deadline and says the process was killed.
  t0 = std::chrono::steady_clock::now();
  code = (*p)->Wait(Deadline::In(Millis(1000)));
  if (code.ok()) {
    EXPECT_EQ(*code, 128 + 9);
  } else if (code.status().Is(ErrorKind::kProtocol)) {
    EXPECT_NE(code.status().message().find("killed"), std::string::npos)
        << code.status().ToString();
  } else {
    EXPECT_TRUE(code.status().Is(ErrorKind::kTimeout)) << code.status().ToString();
  }
  EXPECT_LT(SecondsSince(t0), 1.0 + kSlackS);
  // The connection is still usable afterwards.
  auto out = RunToCompletion(*c, {{"echo", "after"}, {}}, Generous());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "after\n");
}

TEST_F(SshTransportTest, KillClosesStdinSoAProcessReadingItExitsAndWaitSeesIt) {
  auto c = MustConnect(FixtureNode());
  ASSERT_NE(c, nullptr);
  auto p = c->Start({{"sh", "-c", "echo ready; cat >/dev/null; exit 7"}, {}}, Generous());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto line = (*p)->ReadLine(Generous());  // it runs and reads stdin
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  (*p)->Kill();
  auto code = (*p)->Wait(Generous());
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  // 7: stdin closed and it exited; 137: sshd delivered the KILL first.
  EXPECT_TRUE(*code == 7 || *code == 137) << *code;
}

TEST_F(SshTransportTest, StrictRejectsAnUnknownHostNamingItsFingerprint) {
  Node n = FixtureNode();
  n.ssh.known_hosts = sshd_->WriteFile("known_hosts_empty", "");
  auto c = SshTransport().Connect(n, Generous());
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().Is(ErrorKind::kHostKeyMismatch)) << c.status().ToString();
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("is not in " + n.ssh.known_hosts), std::string::npos) << m;
  std::string fp = HostFingerprint();
  ASSERT_EQ(fp.rfind("SHA256:", 0), 0u) << fp;
  EXPECT_NE(m.find(fp), std::string::npos) << m << " lacks " << fp;
}

TEST_F(SshTransportTest, TheKeyscanLineInTheUnknownHostErrorFixesIt) {
  Node n = FixtureNode();
  n.ssh.known_hosts = sshd_->WriteFile("known_hosts_keyscan", "");
  auto c = SshTransport().Connect(n, Generous());
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  std::string line =
      "ssh-keyscan -H -p " + std::to_string(n.ssh.port) + " 127.0.0.1 >> " + n.ssh.known_hosts;
  ASSERT_NE(m.find("run: " + line + " "), std::string::npos) << m;
  // What the newcomer pastes, as they would paste it.
  ASSERT_EQ(std::system((line + " 2>/dev/null").c_str()), 0) << line;
  auto again = SshTransport().Connect(n, Generous());
  EXPECT_TRUE(again.ok()) << again.status().ToString();
}

TEST_F(SshTransportTest, StrictRejectsAChangedKeyAsPossibleMitm) {
  Node n = FixtureNode();
  n.ssh.known_hosts = sshd_->WriteFile("known_hosts_wrong", sshd_->KnownHostsLine(true) + "\n");
  auto c = SshTransport().Connect(n, Generous());
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().Is(ErrorKind::kHostKeyMismatch)) << c.status().ToString();
  EXPECT_NE(c.status().message().find("changed"), std::string::npos);
  EXPECT_NE(c.status().message().find(HostFingerprint()), std::string::npos);
}

TEST_F(SshTransportTest, AcceptNewLearnsTheKeyAndStrictAcceptsItAfterwards) {
  Node n = FixtureNode();
  n.ssh.known_hosts = sshd_->dir() + "/learned/known_hosts";  // dir missing too
  n.ssh.host_key_policy = "accept-new";
  ASSERT_NE(MustConnect(n), nullptr);
  std::string learned = ReadFile(n.ssh.known_hosts);
  EXPECT_NE(learned.find("[127.0.0.1]:" + std::to_string(sshd_->port())), std::string::npos)
      << learned;
  n.ssh.host_key_policy = "strict";
  EXPECT_NE(MustConnect(n), nullptr);
}

TEST_F(SshTransportTest, AcceptNewStillRejectsAChangedKey) {
  Node n = FixtureNode();
  n.ssh.known_hosts = sshd_->WriteFile("known_hosts_wrong2", sshd_->KnownHostsLine(true) + "\n");
  n.ssh.host_key_policy = "accept-new";
  auto c = SshTransport().Connect(n, Generous());
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().Is(ErrorKind::kHostKeyMismatch)) << c.status().ToString();
}

TEST_F(SshTransportTest, PolicyOffConnectsToAChangedKeyButWarns) {
  Node n = FixtureNode();
  n.ssh.known_hosts = sshd_->WriteFile("known_hosts_wrong3", sshd_->KnownHostsLine(true) + "\n");
  n.ssh.host_key_policy = "off";
  auto c = MustConnect(n);
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(c->Warnings().size(), 1u);
  EXPECT_EQ(c->Warnings()[0].rfind("host key checking is off for node1", 0), 0u)
      << c->Warnings()[0];
}

TEST_F(SshTransportTest, UnknownHostKeyPolicyIsABadInventory) {
  Node n = FixtureNode();
  n.ssh.host_key_policy = "yolo";
  auto c = SshTransport().Connect(n, Generous());
  EXPECT_TRUE(c.status().Is(ErrorKind::kBadInventory)) << c.status().ToString();
}

TEST_F(SshTransportTest, WrongIdentityIsAuthFailedNamingKeyAndUser) {
  Node n = FixtureNode();
  n.ssh.identity = sshd_->unauthorized_key();
  auto c = SshTransport().Connect(n, Generous());
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().Is(ErrorKind::kAuthFailed)) << c.status().ToString();
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("publickey with identity " + n.ssh.identity), std::string::npos) << m;
  EXPECT_NE(m.find("root@127.0.0.1:"), std::string::npos) << m;
}

TEST_F(SshTransportTest, MissingIdentityFileIsAuthFailedNamingIt) {
  Node n = FixtureNode();
  n.ssh.identity = sshd_->dir() + "/no_such_key";
  auto c = SshTransport().Connect(n, Generous());
  EXPECT_TRUE(c.status().Is(ErrorKind::kAuthFailed)) << c.status().ToString();
  EXPECT_NE(c.status().message().find("no_such_key"), std::string::npos);
}

TEST_F(SshTransportTest, PortWithoutListenerIsUnreachableNamingAddressAndPort) {
  int port;
  {
    SilentListener l;  // take a free port, then free it
    port = l.port;
  }
  Node n = FixtureNode();
  n.ssh.port = port;
  auto t0 = std::chrono::steady_clock::now();
  auto c = SshTransport().Connect(n, Generous());
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(c.status().Is(ErrorKind::kUnreachable)) << c.status().ToString();
  EXPECT_NE(c.status().message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << c.status().message();
  EXPECT_LT(SecondsSince(t0), kSlackS);
}

TEST_F(SshTransportTest, SilentListenerCannotHoldConnectPastTheDeadline) {
  SilentListener l;
  Node n = FixtureNode();
  n.ssh.port = l.port;
  n.ssh.connect_timeout_s = 30;
  auto t0 = std::chrono::steady_clock::now();
  auto c = SshTransport().Connect(n, Deadline::In(Millis(800)));
  EXPECT_TRUE(c.status().Is(ErrorKind::kTimeout)) << c.status().ToString();
  EXPECT_LT(SecondsSince(t0), 0.8 + kSlackS);
}

TEST_F(SshTransportTest, SilentListenerIsUnreachableAfterConnectTimeout) {
  SilentListener l;
  Node n = FixtureNode();
  n.ssh.port = l.port;
  n.ssh.connect_timeout_s = 0.5;
  auto t0 = std::chrono::steady_clock::now();
  auto c = SshTransport().Connect(n, Generous());
  EXPECT_TRUE(c.status().Is(ErrorKind::kUnreachable)) << c.status().ToString();
  EXPECT_LT(SecondsSince(t0), 0.5 + kSlackS);
}

TEST_F(SshTransportTest, UploadIsAtomicMakesPrivateDirsAndReportsTheSize) {
  auto c = MustConnect(FixtureNode());
  ASSERT_NE(c, nullptr);
  Deadline d = Generous();
  std::string base = sshd_->dir() + "/up";
  std::string target = base + "/a/b/agent";
  std::string content(300 * 1024, 'x');  // several SFTP writes
  content += "end";
  Status s = c->Upload(content, target, 0755, d);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(ReadFile(target) == content);
  struct stat st {};
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  for (const std::string& dir : {base, base + "/a", base + "/a/b"}) {
    ASSERT_EQ(stat(dir.c_str(), &st), 0) << dir;
    EXPECT_EQ(st.st_mode & 07777, 0700u) << dir;
  }
  // Again over the existing file (SFTP v3 rename refuses to overwrite).
  s = c->Upload("second\n", target, 0700, d);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ReadFile(target), "second\n");
  for (const auto& e : fs::directory_iterator(base + "/a/b")) {
    EXPECT_EQ(e.path().filename(), "agent") << "left behind: " << e.path();
  }
  auto size = c->FileSize(target, d);
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, 7);
  EXPECT_TRUE(c->FileSize(base + "/a/missing", d).status().Is(ErrorKind::kNotFound));
  EXPECT_TRUE(c->FileSize(base + "/a", d).status().Is(ErrorKind::kNotFound));
}

TEST_F(SshTransportTest, UploadUnderTildeLandsInTheRemoteHome) {
  auto c = MustConnect(FixtureNode());
  ASSERT_NE(c, nullptr);
  std::string rel = ".cache/cc-ssh-test-" + std::to_string(getpid());
  std::string home = getenv("HOME") != nullptr ? getenv("HOME") : "/root";
  Deadline d = Generous();
  Status s = c->Upload("hello", "~/" + rel + "/f", 0600, d);
  std::string local = home + "/" + rel + "/f";
  std::string got = ReadFile(local);
  auto size = c->FileSize("~/" + rel + "/f", d);
  std::error_code ec;
  fs::remove_all(home + "/" + rel, ec);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got, "hello");
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, 5);
}

TEST_F(SshTransportTest, AFrozenServerCannotHoldCallsPastTheirDeadline) {
  std::vector<pid_t> before = sshd_->SessionPids();
  auto c = MustConnect(FixtureNode());
  ASSERT_NE(c, nullptr);
  std::string file = sshd_->WriteFile("frozen_probe", "abc");
  auto size = c->FileSize(file, Generous());  // SFTP up before the freeze
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  std::vector<pid_t> frozen;
  for (pid_t pid : sshd_->SessionPids()) {
    if (std::find(before.begin(), before.end(), pid) == before.end()) frozen.push_back(pid);
  }
  ASSERT_FALSE(frozen.empty());
  for (pid_t pid : frozen) kill(pid, SIGSTOP);
  auto t0 = std::chrono::steady_clock::now();
  size = c->FileSize(file, Deadline::In(Millis(700)));
  double sftp_s = SecondsSince(t0);
  t0 = std::chrono::steady_clock::now();
  auto p = c->Start({{"echo", "x"}, {}}, Deadline::In(Millis(700)));
  double start_s = SecondsSince(t0);
  for (pid_t pid : frozen) kill(pid, SIGCONT);
  EXPECT_FALSE(size.ok());
  EXPECT_TRUE(size.status().Is(ErrorKind::kTimeout) || size.status().Is(ErrorKind::kUnreachable))
      << size.status().ToString();
  // At most the watchdog's grace past the deadline (ssh_session.h).
  const double grace_s = std::chrono::duration<double>(kWatchdogGrace).count();
  EXPECT_LT(sftp_s, 0.7 + grace_s + kSlackS);
  EXPECT_FALSE(p.ok());
  EXPECT_LT(start_s, 0.7 + grace_s + kSlackS);
}

TEST_F(SshTransportTest, TwentyConnectionsInParallelThreadsWork) {
  const int kThreads = 20;
  std::atomic<int> good{0};
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Node n = FixtureNode();
      n.name = "node" + std::to_string(i);
      auto c = SshTransport().Connect(n, Generous());
      if (!c.ok()) {
        errors[i] = c.status().ToString();
        return;
      }
      auto out = RunToCompletion(**c, {{"echo", std::to_string(i)}, {}}, Generous());
      if (!out.ok()) {
        errors[i] = out.status().ToString();
      } else if (*out != std::to_string(i) + "\n") {
        errors[i] = "wrong output: " + *out;
      } else {
        ++good;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) EXPECT_TRUE(errors[i].empty()) << i << ": " << errors[i];
  EXPECT_EQ(good.load(), kThreads);
}

TEST_F(SshTransportTest, ConfigFileDecidesHostPortUserAndKeyWhenTheInventoryDoesNot) {
  Node n;
  n.name = "aliased";
  n.address = "cc-test-alias";  // only the config knows where that is
  n.ssh.known_hosts = *known_hosts_;
  n.ssh.config_file = sshd_->WriteFile(
      "alias_config", "Host cc-test-alias\n  HostName 127.0.0.1\n  Port " +
                          std::to_string(sshd_->port()) + "\n  User root\n  IdentityFile " +
                          sshd_->client_key() + "\n");
  auto c = MustConnect(n);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->Describe(), "ssh root@127.0.0.1:" + std::to_string(sshd_->port()));
  auto out = RunToCompletion(*c, {{"echo", "via config"}, {}}, Generous());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "via config\n");
}

TEST_F(SshTransportTest, MissingConfigFileIsABadInventory) {
  Node n = FixtureNode();
  n.ssh.config_file = sshd_->dir() + "/no_such_config";
  auto c = SshTransport().Connect(n, Generous());
  EXPECT_TRUE(c.status().Is(ErrorKind::kBadInventory)) << c.status().ToString();
}

}  // namespace
}  // namespace cc
