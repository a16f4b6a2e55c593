#include "orchestrator/transport/fake_transport.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <thread>

#include "agent/protocol.h"
#include "common/fake_clock.h"

namespace cc {
namespace {

using protocol::Json;

Node NamedNode(const std::string& name) {
  Node n;
  n.name = name;
  return n;
}

std::unique_ptr<Connection> ConnectOrDie(FakeTransport& t, const std::string& name) {
  auto c = t.Connect(NamedNode(name), Deadline::InSeconds(1));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? std::move(*c) : nullptr;
}

Json ReadMessage(RemoteProcess& p) {
  auto line = p.ReadLine(Deadline::InSeconds(1));
  EXPECT_TRUE(line.ok()) << line.status().ToString();
  if (!line.ok()) return Json();
  auto msg = protocol::ParseMessage(*line);
  EXPECT_TRUE(msg.ok()) << msg.status().ToString();
  return msg.ok() ? *msg : Json();
}

TEST(FakeTransport, ScriptedAgentSaysHelloAndAnswersRequests) {
  FakeTransport t;
  FakeNode node;
  node.program = FakeAgent(
      [](const Json& req) {
        return std::vector<Json>{protocol::MakeResult(req["id"], "system", {{"cmd", req["cmd"]}})};
      },
      "gpu001");
  t.SetNode("gpu001", node);
  auto c = ConnectOrDie(t, "gpu001");
  ASSERT_TRUE(c);
  auto p = c->Start({{"~/.cache/clustercheck/agent-1234"}, {}}, Deadline::InSeconds(1));
  ASSERT_TRUE(p.ok());
  RemoteProcess& agent = **p;

  Json hello = ReadMessage(agent);
  EXPECT_TRUE(protocol::CheckHello(hello).ok()) << hello.dump();
  EXPECT_EQ(hello["hostname"], "gpu001");

  std::string req = protocol::MakeRequest(7, "facts", {}).dump() + "\n";
  ASSERT_TRUE(agent.WriteStdin(req, Deadline::InSeconds(1)).ok());
  Json result = ReadMessage(agent);
  EXPECT_EQ(result["type"], "result");
  EXPECT_EQ(result["id"], 7);
  EXPECT_EQ(result["data"]["cmd"], "facts");
  Json end = ReadMessage(agent);
  EXPECT_EQ(end["type"], "end");
  EXPECT_EQ(end["id"], 7);
  EXPECT_EQ(end["ok"], true);

  agent.CloseStdin();
  EXPECT_TRUE(agent.ReadLine(Deadline::InSeconds(1)).status().Is(ErrorKind::kEof));
  EXPECT_EQ(agent.Wait(Deadline::InSeconds(1)).value(), 0);
  ASSERT_EQ(t.Started("gpu001").size(), 1u);
  EXPECT_EQ(t.Started("gpu001")[0].argv[0], "~/.cache/clustercheck/agent-1234");
}

TEST(FakeTransport, AgentWithOtherProtocolVersionFailsHelloCheck) {
  FakeTransport t;
  FakeNode node;
  node.program =
      FakeAgent([](const Json&) { return std::vector<Json>{}; }, "old", protocol::kVersion + 1);
  t.SetDefault(node);
  auto c = ConnectOrDie(t, "anything");
  ASSERT_TRUE(c);
  auto p = c->Start({{"agent"}, {}}, Deadline::InSeconds(1));
  ASSERT_TRUE(p.ok());
  Status s = protocol::CheckHello(ReadMessage(**p));
  EXPECT_TRUE(s.Is(ErrorKind::kProtocol)) << s.ToString();
}

TEST(FakeTransport, ConnectErrorsAreReturnedAndCounted) {
  FakeTransport t;
  FakeNode down;
  down.connect_error = Status::Unreachable("down: no route");
  t.SetNode("down", down);
  FakeNode slow;
  slow.connect_hangs = true;
  t.SetNode("slow", slow);

  auto c = t.Connect(NamedNode("down"), Deadline::InSeconds(1));
  EXPECT_TRUE(c.status().Is(ErrorKind::kUnreachable));
  EXPECT_EQ(c.status().message(), "down: no route");
  EXPECT_EQ(t.ConnectCount("down"), 1);

  FakeClock clock;
  c = t.Connect(NamedNode("slow"), Deadline::In(clock, Millis(150)));
  EXPECT_TRUE(c.status().Is(ErrorKind::kTimeout));
  EXPECT_EQ(clock.Elapsed(), Millis(150));

  EXPECT_TRUE(t.Connect(NamedNode("fine"), Deadline::InSeconds(1)).ok());
}

std::unique_ptr<RemoteProcess> StartHung(FakeTransport& t) {
  FakeNode stuck;
  stuck.program.hang = true;
  t.SetNode("stuck", stuck);
  auto c = ConnectOrDie(t, "stuck");
  if (!c) return nullptr;
  auto p = c->Start({{"agent"}, {}}, Deadline::InSeconds(1));
  EXPECT_TRUE(p.ok());
  return p.ok() ? std::move(*p) : nullptr;
}

TEST(FakeTransport, HangingProgramRunsReadsAndWaitsToTheirDeadline) {
  FakeTransport t;
  auto p = StartHung(t);
  ASSERT_TRUE(p);
  FakeClock clock;
  EXPECT_TRUE(p->ReadLine(Deadline::In(clock, Millis(150))).status().Is(ErrorKind::kTimeout));
  EXPECT_EQ(clock.Elapsed(), Millis(150));
  p->CloseStdin();  // a hung process does not notice
  EXPECT_TRUE(p->Wait(Deadline::In(clock, Millis(50))).status().Is(ErrorKind::kTimeout));
  EXPECT_EQ(clock.Elapsed(), Millis(200));
  p->Kill();
  EXPECT_EQ(p->Wait(Deadline::In(clock, Millis(50))).value(), 128 + SIGTERM);
  EXPECT_EQ(clock.Elapsed(), Millis(200)) << "an exited process is no wait";
}

TEST(FakeTransport, KillFromAnotherThreadWakesABlockedRead) {
  FakeTransport t;
  auto p = StartHung(t);
  ASSERT_TRUE(p);
  std::thread killer([&] {
    std::this_thread::sleep_for(Millis(50));
    p->Kill();
  });
  // Real time: the wakeup comes from another thread, which a FakeClock's
  // wait would not wait for.
  auto t0 = std::chrono::steady_clock::now();
  auto line = p->ReadLine(Deadline::InSeconds(10));
  killer.join();
  EXPECT_TRUE(line.status().Is(ErrorKind::kEof));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, Millis(5000));
}

TEST(FakeTransport, ReplyCanExitOrHangMidConversation) {
  FakeTransport t;
  FakeNode node;
  node.program.exit_code = 139;
  node.program.on_line = [](const CommandLine&, const std::string& line) {
    if (line == "crash") return FakeReply::Exit({"partial"}, "boom\n");
    if (line == "stall") return FakeReply::Hang();
    return FakeReply::Lines({"echo " + line});
  };
  t.SetDefault(node);
  auto c = ConnectOrDie(t, "n");
  ASSERT_TRUE(c);

  auto p = c->Start({{"x"}, {}}, Deadline::InSeconds(1));
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE((*p)->WriteStdin("a\ncrash\nb\n", Deadline::InSeconds(1)).ok());
  EXPECT_EQ((*p)->ReadLine(Deadline::InSeconds(1)).value(), "echo a");
  EXPECT_EQ((*p)->ReadLine(Deadline::InSeconds(1)).value(), "partial");
  EXPECT_TRUE((*p)->ReadLine(Deadline::InSeconds(1)).status().Is(ErrorKind::kEof));
  EXPECT_EQ((*p)->Wait(Deadline::InSeconds(1)).value(), 139);
  EXPECT_EQ((*p)->StderrSoFar(), "boom\n");
  EXPECT_TRUE((*p)->WriteStdin("c\n", Deadline::InSeconds(1)).Is(ErrorKind::kEof));

  auto q = c->Start({{"x"}, {}}, Deadline::InSeconds(1));
  ASSERT_TRUE(q.ok());
  ASSERT_TRUE((*q)->WriteStdin("stall\nb\n", Deadline::InSeconds(1)).ok());
  FakeClock clock;
  EXPECT_TRUE((*q)->ReadLine(Deadline::In(clock, Millis(50))).status().Is(ErrorKind::kTimeout));
}

TEST(FakeTransport, RunToCompletionSeesExitCodeAndStderr) {
  FakeTransport t;
  FakeNode node;
  node.program.on_start = [](const CommandLine&) {
    FakeReply r = FakeReply::Lines({"out"});
    r.err = "no GPU found";
    return r;
  };
  node.program.exit_code = 3;
  t.SetNode("n", node);
  auto c = ConnectOrDie(t, "n");
  ASSERT_TRUE(c);
  auto out = RunToCompletion(*c, {{"nvidia-smi"}, {}}, Deadline::InSeconds(1));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("exited with 3: no GPU found"), std::string::npos)
      << out.status().message();
}

TEST(FakeTransport, UploadsAreRecordedPerNodeAndAnswerFileSize) {
  FakeTransport t;
  t.SetFile("a", "~/.cache/clustercheck/agent-old", "12345");
  FakeNode broken_node;
  broken_node.upload_error = Status::Io("disk full");
  t.SetNode("broken", broken_node);
  auto a = ConnectOrDie(t, "a");
  auto b = ConnectOrDie(t, "b");
  ASSERT_TRUE(a && b);
  const std::string path = "~/.cache/clustercheck/agent-new";
  EXPECT_TRUE(a->FileSize(path, Deadline::InSeconds(1)).status().Is(ErrorKind::kNotFound));
  EXPECT_EQ(a->FileSize("~/.cache/clustercheck/agent-old", Deadline::InSeconds(1)).value(), 5);
  ASSERT_TRUE(a->Upload("binary", path, 0700, Deadline::InSeconds(1)).ok());
  EXPECT_EQ(a->FileSize(path, Deadline::InSeconds(1)).value(), 6);
  EXPECT_EQ(t.Files("a").at(path), "binary");
  EXPECT_EQ(t.UploadCount("a"), 1);
  // Another node has its own disk.
  EXPECT_TRUE(b->FileSize(path, Deadline::InSeconds(1)).status().Is(ErrorKind::kNotFound));
  EXPECT_EQ(t.UploadCount("b"), 0);

  auto broken = ConnectOrDie(t, "broken");
  ASSERT_TRUE(broken);
  EXPECT_TRUE(broken->Upload("x", path, 0700, Deadline::InSeconds(1)).Is(ErrorKind::kIo));
  EXPECT_TRUE(t.Files("broken").empty());
}

}  // namespace
}  // namespace cc
