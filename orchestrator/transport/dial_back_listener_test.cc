#include "orchestrator/transport/dial_back_listener.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "agent/dial_back.h"
#include "orchestrator/transport/agent_channel.h"
#include "orchestrator/transport/socket_process.h"

namespace cc {
namespace {

using ::testing::HasSubstr;

// A client connection to the listener that sends `line` (with '\n').
int Dial(int port, const std::string& line) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  std::string l = line + "\n";
  EXPECT_EQ(write(fd, l.data(), l.size()), static_cast<ssize_t>(l.size()));
  return fd;
}

// Waits until the listener logged `n` refusals (or 5 s).
std::vector<std::string> RefusalsAfter(DialBackListener& l, size_t n) {
  for (int i = 0; i < 500 && l.refusals().size() < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return l.refusals();
}

TEST(DialBackListener, TheRightAgentIsHandedOverAndSpeaksThroughTheConnection) {
  auto l = DialBackListener::Open("127.0.0.1", 0, "k3y", {"n1", "n2"});
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  int agent = Dial((*l)->port(), DialHelloLine({"n1", "main", "k3y"}));
  auto fd = (*l)->Await("n1", "main", Deadline::InSeconds(5));
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_TRUE((*l)->Dialled("n1", "main"));
  SocketProcess p(*fd, "n1's agent", nullptr);
  ASSERT_EQ(write(agent, "{\"type\":\"hello\"}\n", 17), 17);
  auto line = p.ReadLine(Deadline::InSeconds(5));
  ASSERT_TRUE(line.ok()) << line.status().ToString();
  EXPECT_EQ(*line, "{\"type\":\"hello\"}");
  ASSERT_TRUE(p.WriteStdin("{\"cmd\":\"x\"}\n", Deadline::InSeconds(5)).ok());
  char buf[64] = {};
  ASSERT_EQ(read(agent, buf, sizeof buf), 12);
  p.CloseStdin();
  EXPECT_EQ(read(agent, buf, sizeof buf), 0) << "the agent reads the end of its input";
  close(agent);
  EXPECT_TRUE(p.ReadLine(Deadline::InSeconds(5)).status().Is(ErrorKind::kEof));
  EXPECT_TRUE((*l)->refusals().empty());
}

TEST(DialBackListener, StrangersWrongSecretsAndSecondConnectionsAreRefusedAndLogged) {
  std::vector<std::string> heard;
  std::mutex mu;
  auto l = DialBackListener::Open("127.0.0.1", 0, "k3y", {"n1"}, [&](const std::string& s) {
    std::lock_guard<std::mutex> lock(mu);
    heard.push_back(s);
  });
  ASSERT_TRUE(l.ok());
  const int port = (*l)->port();
  int wrong = Dial(port, DialHelloLine({"n1", "main", "guess"}));
  int stranger = Dial(port, DialHelloLine({"n9", "main", "k3y"}));
  int junk = Dial(port, "GET / HTTP/1.0");
  auto refused = RefusalsAfter(**l, 3);
  ASSERT_EQ(refused.size(), 3u);
  std::string all;
  for (const auto& r : refused) all += r + "\n";
  EXPECT_THAT(all, HasSubstr("wrong secret (says it is n1)"));
  EXPECT_THAT(all, HasSubstr("node n9 is not in this run"));
  EXPECT_THAT(all, HasSubstr("not a clustercheck agent's hello"));
  EXPECT_THAT(all, HasSubstr("127.0.0.1:"));
  EXPECT_FALSE((*l)->Dialled("n1", "main")) << "a wrong secret does not count";
  int first = Dial(port, DialHelloLine({"n1", "main", "k3y"}));
  auto fd = (*l)->Await("n1", "main", Deadline::InSeconds(5));
  ASSERT_TRUE(fd.ok());
  int second = Dial(port, DialHelloLine({"n1", "main", "k3y"}));
  refused = RefusalsAfter(**l, 4);
  ASSERT_EQ(refused.size(), 4u);
  EXPECT_THAT(refused.back(), HasSubstr("a second connection for n1 (slot main)"));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(heard.size(), 4u);
  EXPECT_THAT(heard[0], HasSubstr("refused a dial-back from 127.0.0.1:"));
  for (int fd2 : {wrong, stranger, junk, first, second, *fd}) close(fd2);
}

TEST(DialBackListener, ANodeThatNeverDialsTimesOut) {
  auto l = DialBackListener::Open("127.0.0.1", 0, "k", {"n1"});
  ASSERT_TRUE(l.ok());
  auto fd = (*l)->Await("n1", "main", Deadline::In(Millis(300)));
  EXPECT_TRUE(fd.status().Is(ErrorKind::kTimeout)) << fd.status().ToString();
  EXPECT_FALSE(DialBackListener::Open("not-an-ip", 0, "k", {}).ok());
}

// A launcher whose stderr is Slurm cancelling the step at its time limit.
class TimeLimitedLauncher : public RemoteProcess {
 public:
  Status WriteStdin(std::string_view, Deadline) override { return Status::Ok(); }
  void CloseStdin() override {}
  Result<std::string> ReadLine(Deadline) override { return Status::Eof("none"); }
  std::string StderrSoFar() override {
    return "srun: Job step aborted\nslurmstepd: error: *** STEP 42.3 ON node2 CANCELLED AT "
           "2026-12-04T17:00:00 DUE TO TIME LIMIT ***\n";
  }
  Result<int> Wait(Deadline) override { return 143; }
  void Kill() override {}
};

TEST(SocketProcess, AConnectionSlurmEndedAtItsTimeLimitIsATimeoutNotACrash) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  SocketProcess p(sv[0], "node2's agent (step-3)", std::make_unique<TimeLimitedLauncher>());
  close(sv[1]);
  auto line = p.ReadLine(Deadline::InSeconds(5));
  ASSERT_TRUE(line.status().Is(ErrorKind::kTimeout)) << line.status().ToString();
  EXPECT_THAT(line.status().message(), HasSubstr("Slurm ended it"));
  EXPECT_THAT(line.status().message(), HasSubstr("DUE TO TIME LIMIT"));
  EXPECT_EQ(SlurmTimeLimitLine("srun: error: node2: task 0: Exited with exit code 1\n"), "");
}

TEST(SocketProcess, AnAgentChannelHearsTheTimeLimitAtOnceNotAtItsDeadline) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  close(sv[1]);
  AgentChannel ch(std::make_unique<SocketProcess>(
      sv[0], "node2's agent", nullptr, [] { return TimeLimitedLauncher().StderrSoFar(); }));
  const auto t0 = std::chrono::steady_clock::now();
  auto hello = ch.ReadHello(Deadline::InSeconds(30));
  EXPECT_TRUE(hello.status().Is(ErrorKind::kTimeout)) << hello.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

}  // namespace
}  // namespace cc
