#include "orchestrator/transport/local_transport.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/protocol.h"
#include "build_paths.h"

namespace cc {
namespace {

using std::chrono::duration_cast;

std::unique_ptr<RemoteProcess> StartOrDie(Connection& c, CommandLine cmd) {
  auto p = c.Start(cmd, Deadline::InSeconds(5));
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? std::move(*p) : nullptr;
}

CommandLine Sh(const std::string& script) { return {{"sh", "-c", script}, {}}; }

// Gone, or a zombie nobody reaped yet (the container's init may not reap).
bool ProcessGone(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!f || !std::getline(f, stat)) return true;
  size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] == 'Z' ||
         stat[paren + 2] == 'X';
}

bool GoneWithin(pid_t pid, Millis limit) {
  Deadline d = Deadline::In(limit);
  while (!ProcessGone(pid)) {
    if (d.Passed()) return false;
    std::this_thread::sleep_for(Millis(10));
  }
  return true;
}

pid_t ReadPid(RemoteProcess& p) {
  auto line = p.ReadLine(Deadline::InSeconds(5));
  EXPECT_TRUE(line.ok()) << line.status().ToString();
  return line.ok() ? std::stoi(*line) : -1;
}

TEST(LocalTransport, EchoesThroughStdinAndStdout) {
  LocalConnection c;
  auto p = StartOrDie(c, {{"cat"}, {}});
  ASSERT_TRUE(p);
  ASSERT_TRUE(p->WriteStdin("hello\nworld\n", Deadline::InSeconds(5)).ok());
  EXPECT_EQ(p->ReadLine(Deadline::InSeconds(5)).value(), "hello");
  EXPECT_EQ(p->ReadLine(Deadline::InSeconds(5)).value(), "world");
  p->CloseStdin();
  EXPECT_TRUE(p->ReadLine(Deadline::InSeconds(5)).status().Is(ErrorKind::kEof));
  auto code = p->Wait(Deadline::InSeconds(5));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0);
}

TEST(LocalTransport, ConnectIgnoresAddressAndDescribesItselfAsLocal) {
  LocalTransport t;
  Node n;
  n.name = "sim1";
  n.address = "10.99.99.99";
  auto c = t.Connect(n, Deadline::InSeconds(1));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)->Describe(), "local");
  auto out = RunToCompletion(**c, {{"echo", "hi"}, {}}, Deadline::InSeconds(5));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "hi\n");
}

TEST(LocalTransport, PassesEnvironmentOverTheParents) {
  setenv("CC_LT_INHERITED", "from-parent", 1);
  setenv("CC_LT_OVERRIDDEN", "old", 1);
  LocalConnection c;
  CommandLine cmd =
      Sh("echo \"$CC_LT_SET\"; echo \"$CC_LT_INHERITED\"; echo "
         "\"$CC_LT_OVERRIDDEN\"");
  cmd.env = {{"CC_LT_SET", "a value with spaces"}, {"CC_LT_OVERRIDDEN", "new"}};
  auto out = RunToCompletion(c, cmd, Deadline::InSeconds(5));
  unsetenv("CC_LT_INHERITED");
  unsetenv("CC_LT_OVERRIDDEN");
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "a value with spaces\nfrom-parent\nnew\n");
}

TEST(LocalTransport, DeadlineStopsWaitingForHungCommandAndKillReapsIt) {
  LocalConnection c;
  auto p = StartOrDie(c, Sh("echo $$; exec sleep 100"));
  ASSERT_TRUE(p);
  pid_t pid = ReadPid(*p);
  ASSERT_GT(pid, 0);
  auto t0 = std::chrono::steady_clock::now();
  auto line = p->ReadLine(Deadline::In(Millis(300)));
  auto waited = duration_cast<Millis>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(line.status().Is(ErrorKind::kTimeout)) << line.status().ToString();
  EXPECT_GE(waited, 290);
  EXPECT_LT(waited, 1500);
  EXPECT_TRUE(p->Wait(Deadline::In(Millis(100))).status().Is(ErrorKind::kTimeout));
  EXPECT_FALSE(ProcessGone(pid));
  p->Kill();
  EXPECT_TRUE(ProcessGone(pid));  // reaped by Kill itself, not by init
  auto code = p->Wait(Deadline::In(Millis(100)));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 128 + SIGTERM);
}

TEST(LocalTransport, KillStopsTheWholeProcessGroup) {
  LocalConnection c;
  // The grandchild ignores SIGTERM, so only the SIGKILL after the grace
  // period stops it.
  auto p = StartOrDie(c, Sh("trap '' TERM; sleep 100 & echo $!; wait"));
  ASSERT_TRUE(p);
  pid_t grandchild = ReadPid(*p);
  ASSERT_GT(grandchild, 0);
  EXPECT_FALSE(ProcessGone(grandchild));
  p->Kill();
  EXPECT_TRUE(GoneWithin(grandchild, Millis(2000)));
}

TEST(LocalTransport, KillIsIdempotentAndSafeAfterWait) {
  LocalConnection c;
  auto p = StartOrDie(c, {{"sleep", "100"}, {}});
  ASSERT_TRUE(p);
  p->Kill();
  p->Kill();
  auto code = p->Wait(Deadline::In(Millis(100)));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 128 + SIGTERM);
  p->Kill();
  EXPECT_EQ(p->Wait(Deadline::In(Millis(100))).value(), 128 + SIGTERM);

  auto q = StartOrDie(c, {{"true"}, {}});
  ASSERT_TRUE(q);
  EXPECT_EQ(q->Wait(Deadline::InSeconds(5)).value(), 0);
  q->Kill();
  EXPECT_EQ(q->Wait(Deadline::InSeconds(5)).value(), 0);
}

TEST(LocalTransport, DestructorLeavesNoProcessBehind) {
  LocalConnection c;
  pid_t pid;
  {
    auto p = StartOrDie(c, Sh("echo $$; exec sleep 100"));
    ASSERT_TRUE(p);
    pid = ReadPid(*p);
  }
  EXPECT_TRUE(ProcessGone(pid));
}

TEST(LocalTransport, ClosedStdoutIsEofWhileProcessRuns) {
  LocalConnection c;
  auto p = StartOrDie(c, Sh("echo last-words; exec >&-; sleep 100"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ReadLine(Deadline::InSeconds(5)).value(), "last-words");
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(p->ReadLine(Deadline::InSeconds(5)).status().Is(ErrorKind::kEof));
  EXPECT_LT(duration_cast<Millis>(std::chrono::steady_clock::now() - t0).count(), 2000);
  EXPECT_TRUE(p->Wait(Deadline::In(Millis(100))).status().Is(ErrorKind::kTimeout));
  p->Kill();
}

TEST(LocalTransport, FinalUnterminatedLineComesBeforeEof) {
  LocalConnection c;
  auto p = StartOrDie(c, {{"printf", "a\\nb"}, {}});
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ReadLine(Deadline::InSeconds(5)).value(), "a");
  EXPECT_EQ(p->ReadLine(Deadline::InSeconds(5)).value(), "b");
  EXPECT_TRUE(p->ReadLine(Deadline::InSeconds(5)).status().Is(ErrorKind::kEof));
}

TEST(LocalTransport, LargeStderrDoesNotDeadlockAndKeepsTheTail) {
  LocalConnection c;
  // 1 MB on stderr before the first stdout line: far beyond a pipe buffer.
  auto p = StartOrDie(c, Sh("head -c 1000000 /dev/zero | tr '\\0' e >&2; echo END >&2; "
                            "echo done"));
  ASSERT_TRUE(p);
  auto line = p->ReadLine(Deadline::InSeconds(10));
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  EXPECT_EQ(*line, "done");
  EXPECT_EQ(p->Wait(Deadline::InSeconds(5)).value(), 0);
  std::string err = p->StderrSoFar();
  EXPECT_EQ(err.size(), 64u * 1024);
  EXPECT_EQ(err.substr(err.size() - 4), "END\n");
}

TEST(LocalTransport, WritingMuchToAnEchoingChildDoesNotDeadlock) {
  LocalConnection c;
  auto p = StartOrDie(c, {{"cat"}, {}});
  ASSERT_TRUE(p);
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "line " + std::to_string(i) + "\n";
  ASSERT_TRUE(p->WriteStdin(big, Deadline::InSeconds(10)).ok());
  p->CloseStdin();
  int lines = 0;
  while (p->ReadLine(Deadline::InSeconds(10)).ok()) ++lines;
  EXPECT_EQ(lines, 20000);
}

TEST(LocalTransport, WritingToAProcessThatClosedStdinIsEof) {
  LocalConnection c;
  auto p = StartOrDie(c, Sh("exec <&-; echo ready; sleep 100"));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->ReadLine(Deadline::InSeconds(5)).value(), "ready");
  std::string chunk(1 << 20, 'x');
  Status s = p->WriteStdin(chunk, Deadline::InSeconds(5));
  EXPECT_TRUE(s.Is(ErrorKind::kEof)) << s.ToString();  // and no SIGPIPE
}

TEST(LocalTransport, RunToCompletionReportsNonZeroExitWithStderr) {
  LocalConnection c;
  auto out = RunToCompletion(c, Sh("echo out; echo oops >&2; exit 3"), Deadline::InSeconds(5));
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(out.status().Is(ErrorKind::kIo));
  EXPECT_NE(out.status().message().find("exited with 3"), std::string::npos)
      << out.status().message();
  EXPECT_NE(out.status().message().find("oops"), std::string::npos);
}

TEST(LocalTransport, MissingProgramIsNotFound) {
  LocalConnection c;
  auto p = c.Start({{"/nonexistent/prog"}, {}}, Deadline::InSeconds(5));
  EXPECT_TRUE(p.status().Is(ErrorKind::kNotFound)) << p.status().ToString();
  p = c.Start({{"no-such-program-cc"}, {}}, Deadline::InSeconds(5));
  EXPECT_TRUE(p.status().Is(ErrorKind::kNotFound)) << p.status().ToString();
  p = c.Start({{"/etc/hostname"}, {}}, Deadline::InSeconds(5));
  EXPECT_TRUE(p.status().Is(ErrorKind::kIo)) << p.status().ToString();
  p = c.Start({{}, {}}, Deadline::InSeconds(5));
  EXPECT_TRUE(p.status().Is(ErrorKind::kBadArgument));
}

TEST(LocalTransport, ChildInheritsNoOtherDescriptors) {
  int leaky[2];
  ASSERT_EQ(pipe(leaky), 0);  // deliberately without O_CLOEXEC
  LocalConnection c;
  auto out = RunToCompletion(c, Sh("ls /proc/$$/fd"), Deadline::InSeconds(5));
  close(leaky[0]);
  close(leaky[1]);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::istringstream in(*out);
  std::string fd;
  while (in >> fd) {
    EXPECT_NE(fd, std::to_string(leaky[0]));
    EXPECT_NE(fd, std::to_string(leaky[1]));
  }
}

TEST(LocalTransport, ClosingStdinReachesChildWhileOthersRun) {
  // If a later child inherited the first one's stdin write end, the first
  // would never see EOF.
  LocalConnection c;
  auto first = StartOrDie(c, {{"cat"}, {}});
  auto second = StartOrDie(c, {{"sleep", "100"}, {}});
  ASSERT_TRUE(first && second);
  first->CloseStdin();
  auto line = first->ReadLine(Deadline::InSeconds(3));
  EXPECT_TRUE(line.status().Is(ErrorKind::kEof)) << line.status().ToString();
}

class LocalUploadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-upload-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  static int Mode(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : -1;
  }
  std::string dir_;
  LocalConnection c_;
};

TEST_F(LocalUploadTest, CreatesParentsWith0700AndSetsMode) {
  std::string path = dir_ + "/a/b/agent";
  mode_t old = umask(0022);
  Status s = c_.Upload("binary", path, 0755, Deadline::InSeconds(5));
  umask(old);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(Mode(dir_ + "/a"), 0700);
  EXPECT_EQ(Mode(dir_ + "/a/b"), 0700);
  EXPECT_EQ(Mode(path), 0755);
  std::ifstream f(path);
  std::string content((std::istreambuf_iterator<char>(f)), {});
  EXPECT_EQ(content, "binary");
  // Nothing but the file: the temporary name was renamed away.
  int entries = 0;
  for (auto& e : std::filesystem::directory_iterator(dir_ + "/a/b")) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  EXPECT_EQ(c_.FileSize(path, Deadline::InSeconds(1)).value(), 6);
}

TEST_F(LocalUploadTest, ReplacesByRenameSoOpenReadersKeepOldContent) {
  std::string path = dir_ + "/f";
  ASSERT_TRUE(c_.Upload("old content", path, 0600, Deadline::InSeconds(5)).ok());
  int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(c_.Upload("new", path, 0600, Deadline::InSeconds(5)).ok());
  char buf[32] = {};
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  // Rewriting in place would have truncated what the reader sees.
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "old content");
  EXPECT_EQ(c_.FileSize(path, Deadline::InSeconds(1)).value(), 3);
}

TEST_F(LocalUploadTest, FileSizeOfMissingOrNonRegularIsNotFound) {
  EXPECT_TRUE(
      c_.FileSize(dir_ + "/missing", Deadline::InSeconds(1)).status().Is(ErrorKind::kNotFound));
  EXPECT_TRUE(c_.FileSize(dir_, Deadline::InSeconds(1)).status().Is(ErrorKind::kNotFound));
}

TEST_F(LocalUploadTest, UploadUnderAFileFailsNamingThePath) {
  ASSERT_TRUE(c_.Upload("x", dir_ + "/plain", 0600, Deadline::InSeconds(5)).ok());
  Status s = c_.Upload("y", dir_ + "/plain/sub/f", 0600, Deadline::InSeconds(5));
  EXPECT_TRUE(s.Is(ErrorKind::kIo));
  EXPECT_NE(s.message().find(dir_ + "/plain"), std::string::npos) << s.message();
}

TEST_F(LocalUploadTest, TildeMeansHome) {
  std::string old_home = getenv("HOME") ? getenv("HOME") : "";
  setenv("HOME", dir_.c_str(), 1);
  EXPECT_EQ(ExpandHome("~/x/y"), dir_ + "/x/y");
  EXPECT_EQ(ExpandHome("/abs/~/x"), "/abs/~/x");
  Status s =
      c_.Upload("#!/bin/sh\necho from-home\n", "~/.cache/cc/tool", 0700, Deadline::InSeconds(5));
  auto out = RunToCompletion(c_, {{"~/.cache/cc/tool"}, {}}, Deadline::InSeconds(5));
  setenv("HOME", old_home.c_str(), 1);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "from-home\n");
}

TEST(LocalTransport, AgentSaysHelloFirstAndExitsWhenStdinCloses) {
  LocalConnection c;
  auto p = StartOrDie(c, {{CLUSTERCHECK_BINARY_DIR "/clustercheck-agent"}, {}});
  ASSERT_TRUE(p);
  auto line = p->ReadLine(Deadline::InSeconds(10));
  ASSERT_TRUE(line.ok()) << line.status().ToString() << " " << p->StderrSoFar();
  auto msg = protocol::ParseMessage(*line);
  ASSERT_TRUE(msg.ok()) << msg.status().ToString();
  Status hello = protocol::CheckHello(*msg);
  EXPECT_TRUE(hello.ok()) << hello.ToString();
  p->CloseStdin();
  while (p->ReadLine(Deadline::InSeconds(10)).ok()) {
  }
  auto code = p->Wait(Deadline::InSeconds(10));
  ASSERT_TRUE(code.ok()) << code.status().ToString();
  EXPECT_EQ(*code, 0);
}

}  // namespace
}  // namespace cc
