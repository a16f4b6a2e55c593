#include "agent/serve.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

#include "agent/line_reader.h"
#include "agent/protocol.h"
#include "build_paths.h"

namespace cc::agent {
namespace {

using protocol::Json;

const std::string kFixtures = CLUSTERCHECK_FIXTURES;

// Serve() on its own thread, talked to through two pipes.
class ServeHarness {
 public:
  explicit ServeHarness(ServeOptions options = {}) {
    EXPECT_EQ(pipe(to_agent_), 0);
    EXPECT_EQ(pipe(from_agent_), 0);
    reader_ = std::make_unique<LineReader>(from_agent_[0]);
    thread_ = std::thread([this, options] {
      exit_code_ = Serve(to_agent_[0], from_agent_[1], options);
      done_ = true;
    });
  }
  ~ServeHarness() {
    CloseStdin();
    if (thread_.joinable()) thread_.join();
    close(to_agent_[0]);
    close(from_agent_[0]);
    close(from_agent_[1]);
  }
  void Send(const Json& j) { SendRaw(j.dump() + "\n"); }
  void SendRaw(const std::string& s) {
    ASSERT_EQ(write(to_agent_[1], s.data(), s.size()), static_cast<ssize_t>(s.size()));
  }
  // The next message, or null after 30 s.
  Json Next() {
    std::string line;
    if (reader_->Next(&line, Deadline::InSeconds(30)) != LineReader::Got::kLine) return nullptr;
    return Json::parse(line);
  }
  // Messages up to and including the `end` for `id`.
  std::vector<Json> UntilEnd(int64_t id) {
    std::vector<Json> got;
    for (;;) {
      Json m = Next();
      if (m.is_null()) break;
      got.push_back(m);
      if (m["type"] == "end" && m["id"] == id) break;
    }
    return got;
  }
  void CloseStdin() {
    if (to_agent_[1] >= 0) close(to_agent_[1]);
    to_agent_[1] = -1;
  }
  bool WaitExit(double seconds) {
    Deadline d = Deadline::InSeconds(seconds);
    while (!done_ && !d.Passed()) usleep(10000);
    return done_;
  }
  int exit_code() const { return exit_code_; }

 private:
  int to_agent_[2] = {-1, -1};
  int from_agent_[2] = {-1, -1};
  std::unique_ptr<LineReader> reader_;
  std::thread thread_;
  std::atomic<bool> done_{false};
  int exit_code_ = -1;
};

ServeOptions FixtureRoot(const std::string& name) {
  ServeOptions o;
  o.root = kFixtures + "/" + name;
  return o;
}

TEST(Serve, HelloComesFirstUnpromptedWithOurVersion) {
  ServeHarness h;
  Json hello = h.Next();
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_TRUE(protocol::CheckHello(hello).ok());
  EXPECT_EQ(hello["pid"], getpid());
}

TEST(Serve, FactsRequestIsAnsweredWithOneResultThenEnd) {
  ServeHarness h(FixtureRoot("sysroot-gpu-node"));
  h.Next();
  h.Send(protocol::MakeRequest(3, "facts", {{"sections", {"system", "network"}}}));
  auto msgs = h.UntilEnd(3);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0]["type"], "result");
  EXPECT_EQ(msgs[0]["id"], 3);
  EXPECT_EQ(msgs[0]["name"], "facts");
  const Json& data = msgs[0]["data"];
  EXPECT_EQ(data["system"]["hostname"], "dgx-a01");
  EXPECT_EQ(data["network"]["interfaces"].size(), 7u);
  EXPECT_FALSE(data.contains("gpu"));  // not asked for
  EXPECT_EQ(msgs[1]["type"], "end");
  EXPECT_EQ(msgs[1]["ok"], true);
}

TEST(Serve, FactsOnAFixtureRootGivesEverySectionWithoutTouchingTheHost) {
  ServeHarness h(FixtureRoot("sysroot-gpu-node"));
  h.Next();
  h.Send(protocol::MakeRequest(4, "facts", {{"python", "python3"}, {"login_env", true}}));
  auto msgs = h.UntilEnd(4);
  ASSERT_EQ(msgs.size(), 2u);
  const Json& d = msgs[0]["data"];
  for (const char* s :
       {"system", "network", "gpu", "cuda", "nccl", "rdma", "mpi", "nccl_env", "torch"}) {
    EXPECT_TRUE(d.contains(s)) << s;
  }
  EXPECT_EQ(d["gpu"]["status"], "skip");
  EXPECT_EQ(d["nccl"]["status"], "skip");
  EXPECT_EQ(d["mpi"]["status"], "skip");
  EXPECT_EQ(d["torch"]["status"], "skip");
  EXPECT_EQ(d["rdma"]["ib_devices"].size(), 2u);
  EXPECT_EQ(d["nccl_env"]["effective"]["NCCL_IB_DISABLE"], "1");
  EXPECT_EQ(msgs[1]["ok"], true);
}

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Issue 17: a login shell that takes 6 s (module systems, conda init) and
// an ompi_info that takes 3 s. The login shell delays only nccl_env, under
// its own 5 s deadline, and the sections run side by side: the answer comes
// after about 5 s, not 5 + 3. With deadline_scale 2 (the controller's
// retest) the login shell gets 10 s and is read.
TEST(Serve, ASlowLoginShellDelaysOnlyTheFactsThatNeedIt) {
  char tmpl[] = "/tmp/cc-slow-login-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  {
    std::ofstream(dir + "/.bash_profile") << "sleep 6\nexport NCCL_SLOW_LOGIN=seen\n";
    std::ofstream(dir + "/ompi_info") << "#!/bin/sh\nsleep 3\necho ompi:version:full:4.1.4\n";
  }
  chmod((dir + "/ompi_info").c_str(), 0755);
  ScopedEnv home("HOME", dir);
  ScopedEnv path("PATH", dir + ":" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin"));
  ServeHarness h;
  h.Next();
  Json args = {{"sections", {"system", "mpi", "nccl_env"}}, {"login_env", true}};
  auto start = std::chrono::steady_clock::now();
  h.Send(protocol::MakeRequest(11, "facts", args));
  auto msgs = h.UntilEnd(11);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(msgs.size(), 2u);
  const Json& d = msgs[0]["data"];
  EXPECT_EQ(d["nccl_env"]["login_env"]["status"], "error");
  EXPECT_EQ(d["nccl_env"]["login_env"]["reason"], "bash -lc 'env -0': did not finish within 5 s");
  EXPECT_EQ(d["mpi"]["openmpi_version"], "4.1.4");
  EXPECT_TRUE(d["system"].contains("kernel"));
  EXPECT_LT(took, 7.5) << "the sections ran one after another";

  args["deadline_scale"] = 2;
  h.Send(protocol::MakeRequest(12, "facts", args));
  msgs = h.UntilEnd(12);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0]["data"]["nccl_env"]["login_env"]["status"], "ok");
  EXPECT_EQ(msgs[0]["data"]["nccl_env"]["effective"]["NCCL_SLOW_LOGIN"], "seen");
  h.Send(protocol::MakeRequest(13, "facts", {{"deadline_scale", 0.5}}));
  msgs = h.UntilEnd(13);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_NE(msgs[0]["error"].get<std::string>().find("deadline_scale"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Serve, FactsWithAnUnknownSectionEndsNotOkNamingIt) {
  ServeHarness h;
  h.Next();
  h.Send(protocol::MakeRequest(5, "facts", {{"sections", {"system", "bogus"}}}));
  auto msgs = h.UntilEnd(5);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0]["ok"], false);
  EXPECT_NE(msgs[0]["error"].get<std::string>().find("bogus"), std::string::npos);
  h.Send(protocol::MakeRequest(6, "facts", {{"library_paths", "/not/an/array"}}));
  msgs = h.UntilEnd(6);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_NE(msgs[0]["error"].get<std::string>().find("library_paths"), std::string::npos);
}

TEST(Serve, UnknownCommandEndsNotOk) {
  ServeHarness h;
  h.Next();
  h.Send(protocol::MakeRequest(7, "frobnicate", Json::object()));
  auto msgs = h.UntilEnd(7);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0]["type"], "end");
  EXPECT_EQ(msgs[0]["ok"], false);
  EXPECT_NE(msgs[0]["error"].get<std::string>().find("frobnicate"), std::string::npos);
}

TEST(Serve, ARequestWithAnotherProtocolVersionIsRejected) {
  ServeHarness h;
  h.Next();
  h.Send(protocol::MakeRequest(8, "facts", Json::object(), protocol::kVersion + 1));
  auto msgs = h.UntilEnd(8);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0]["ok"], false);
  EXPECT_NE(msgs[0]["error"].get<std::string>().find("protocol version mismatch"),
            std::string::npos);
  // The agent is still there for a good request.
  h.Send(protocol::MakeRequest(9, "hello", Json::object()));
  msgs = h.UntilEnd(9);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[1]["ok"], true);
}

TEST(Serve, AGarbageLineIsAnsweredAndTheLoopGoesOn) {
  ServeHarness h;
  h.Next();
  h.SendRaw("Welcome to Ubuntu 22.04\n");
  Json m = h.Next();
  EXPECT_EQ(m["type"], "end");
  EXPECT_EQ(m["ok"], false);
  h.Send(protocol::MakeRequest(10, "hello", Json::object()));
  auto msgs = h.UntilEnd(10);
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0]["type"], "result");
}

TEST(Serve, ExitsWhenStdinCloses) {
  ServeHarness h;
  h.Next();
  h.CloseStdin();
  EXPECT_TRUE(h.WaitExit(10));
  EXPECT_EQ(h.exit_code(), 0);
}

}  // namespace
}  // namespace cc::agent
