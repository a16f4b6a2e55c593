// The facts stage end to end on this machine (local transport, the real
// agent): each node's inventory settings (library_paths, env, python) must
// reach that node's agent, whose dlopen then finds that node's libraries.
// The libraries are the fakes of tests/fakes, answering from a values file.
// Its deadlines on scripted agents and a FakeClock (run/fake_stage_run.h)
// at the end.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "build_paths.h"
#include "orchestrator/run/fake_stage_run.h"
#include "orchestrator/run_command.h"
#include "orchestrator/stages/facts/facts_spec.h"
#include "orchestrator/store/store.h"

namespace cc {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::string kFakes = CLUSTERCHECK_BINARY_DIR "/fakes";
const std::string kFakePython = CLUSTERCHECK_SOURCE_DIR "/tests/fakes/fake_python.sh";

class FactsStageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/cc-facts-stage-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    for (const char* lib : {"libnvidia-ml.so.1", "libcuda.so.1", "libnccl.so.2"}) {
      ASSERT_TRUE(fs::exists(kFakes + "/" + lib)) << "build the fakes: " << kFakes;
    }
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A node's folder: symlinks to the fake libraries named in `libs` and to
  // the fake python, and its values file.
  std::string NodeDir(const std::string& name, const std::vector<std::string>& libs,
                      const std::string& values) {
    std::string d = dir_ + "/" + name;
    fs::create_directories(d);
    for (const auto& lib : libs) fs::create_symlink(kFakes + "/" + lib, d + "/" + lib);
    fs::create_symlink(kFakePython, d + "/python3");
    std::ofstream(d + "/fake_gpu.conf") << values;
    return d;
  }

  // Runs `clustercheck run` on `toml` (stages facts) and returns each
  // node's stored facts.
  std::map<std::string, Json> RunFacts(const std::string& toml) {
    std::string inv = dir_ + "/inventory.toml";
    std::ofstream(inv) << toml;
    RunOptions o;
    o.inventory_path = inv;
    o.db_path = dir_ + "/cc.db";
    o.stages = {"facts"};
    o.agent_binary = CLUSTERCHECK_BINARY_DIR "/clustercheck-agent";
    std::FILE* out = std::tmpfile();
    o.out = o.err = out;
    int rc = RunClusterCheck(o);
    std::fclose(out);
    EXPECT_EQ(rc, 0);
    std::map<std::string, Json> facts;
    auto store = Store::Open(o.db_path);
    if (!store.ok()) {
      ADD_FAILURE() << store.status().ToString();
      return facts;
    }
    auto nodes = (*store)->GetNodes(1);
    EXPECT_TRUE(nodes.ok());
    if (nodes.ok()) {
      for (const auto& n : *nodes) facts[n.node] = n.facts;
    }
    return facts;
  }

  std::string dir_;
};

const char* kNodeA = R"(driver_version = 550.54.15
gpu_count = 8
gpu_name = NVIDIA H100 80GB HBM3
uuid_prefix = GPU-aaaaaaaa-0000-4000-8000-0000000000
cuda_driver_version = 12.4
nccl_version = 2.21.5
torch_version = 2.3.1+cu121
torch_cuda = 12.1
torch_cuda_available = true
torch_device_count = 8
torch_nccl = 2.20.5
)";
const char* kNodeB = R"(driver_version = 535.104.05
gpu_count = 7
gpu_name = NVIDIA H100 80GB HBM3
uuid_prefix = GPU-bbbbbbbb-0000-4000-8000-0000000000
cuda_driver_version = 12020
nccl_version = 2.18.3
)";

TEST_F(FactsStageTest, EachNodesLibraryPathsEnvAndPythonReachItsAgent) {
  // Node a finds its values file beside its libraries; node b's env names
  // a file elsewhere (and b has no libnccl).
  std::string a = NodeDir("a", {"libnvidia-ml.so.1", "libcuda.so.1", "libnccl.so.2"}, kNodeA);
  std::string b = NodeDir("b", {"libnvidia-ml.so.1", "libcuda.so.1"}, "gpu_count = 1\n");
  std::ofstream(dir_ + "/b.conf") << kNodeB;
  auto facts = RunFacts(R"(name = "t"
transport = "local"
[[nodes]]
name = "a"
library_paths = [")" + a +
                        R"("]
python = ")" + a + R"(/python3"
[[nodes]]
name = "b"
library_paths = [")" + b +
                        R"("]
env = { CC_FAKE_GPU_CONF = ")" +
                        dir_ + R"(/b.conf" }
)");
  ASSERT_EQ(facts.size(), 2u);
  const Json& fa = facts["a"];
  const Json& fb = facts["b"];

  EXPECT_EQ(fa["gpu"]["status"], "ok") << fa["gpu"].dump();
  EXPECT_EQ(fa["gpu"]["driver_version"], "550.54.15");
  EXPECT_EQ(fa["gpu"]["count"], 8);
  EXPECT_EQ(fa["gpu"]["gpus"][3]["uuid"], "GPU-aaaaaaaa-0000-4000-8000-000000000003");
  EXPECT_EQ(fa["gpu"]["searched"][0], a + "/libnvidia-ml.so.1: loaded");
  EXPECT_EQ(fa["cuda"]["driver_api_version"], "12.4");
  EXPECT_EQ(fa["nccl"]["version"], "2.21.5");
  EXPECT_EQ(fa["nccl"]["searched"][0], a + "/libnccl.so.2: loaded");
  EXPECT_EQ(fa["torch"]["status"], "ok") << fa["torch"].dump();
  EXPECT_EQ(fa["torch"]["version"], "2.3.1+cu121");
  EXPECT_EQ(fa["torch"]["cuda"], "12.1");
  EXPECT_EQ(fa["torch"]["cuda_available"], true);
  EXPECT_EQ(fa["torch"]["device_count"], 8);
  EXPECT_EQ(fa["torch"]["nccl"], "2.20.5");

  EXPECT_EQ(fb["gpu"]["driver_version"], "535.104.05") << fb["gpu"].dump();
  EXPECT_EQ(fb["gpu"]["count"], 7);
  EXPECT_EQ(fb["cuda"]["driver_api_version"], "12.2");
  EXPECT_EQ(fb["nccl"]["searched"][0], b + "/libnccl.so.2: no such file");
  // Found nowhere, or (on a machine with NCCL installed) not our fake.
  EXPECT_NE(fb["nccl"].value("path", std::string()).rfind(kFakes, 0), 0u);
  EXPECT_EQ(fb["torch"]["status"], "skip");
}

TEST_F(FactsStageTest, NodeWithoutAValuesFileSaysWhyNotWhatAnotherNodeHas) {
  std::string a = NodeDir("a", {"libnvidia-ml.so.1"}, kNodeA);
  std::string c = dir_ + "/c";
  fs::create_directories(c);
  fs::create_symlink(kFakes + "/libnvidia-ml.so.1", c + "/libnvidia-ml.so.1");
  auto facts = RunFacts(R"(name = "t"
transport = "local"
[[nodes]]
name = "a"
library_paths = [")" + a +
                        R"("]
[[nodes]]
name = "c"
library_paths = [")" + c +
                        R"("]
)");
  EXPECT_EQ(facts["a"]["gpu"]["driver_version"], "550.54.15");
  // The fake answers as NVML does without a kernel driver.
  EXPECT_EQ(facts["c"]["gpu"]["status"], "absent") << facts["c"]["gpu"].dump();
  EXPECT_NE(facts["c"]["gpu"]["reason"].get<std::string>().find("Driver Not Loaded"),
            std::string::npos);
}

TEST(FactsStageDeadlines, ANodeThatNeverAnswersIsAskedAgainLongerThenAHangOnTheRunsClock) {
  FakeStageRun run({"gpu001", "gpu002"});
  FakeNode answers;
  answers.program = FakeAgent([](const Json& req) {
    return std::vector<Json>{
        protocol::MakeResult(req["id"], "facts", {{"system", Json::object()}})};
  });
  FakeNode silent = answers;
  silent.program.on_line = [](const CommandLine&, const std::string&) { return FakeReply{}; };
  run.transport().SetNode("gpu001", answers);
  run.transport().SetNode("gpu002", silent);
  run.inventory().stage_settings["facts"] = {{"timeout_s", 60}};
  ASSERT_TRUE(run.Prepare().ok());

  ASSERT_TRUE(MakeFactsStage()->Run(run.ctx()).ok());

  // 60 s for the first answer, then 3 x 60 s for the second: on the fake
  // clock, so the test does not wait four minutes.
  EXPECT_GE(run.clock().Elapsed(), std::chrono::seconds(240));
  EXPECT_LT(run.clock().Elapsed(), std::chrono::seconds(241));
  auto ok = run.Find("facts", "gpu001", "collected");
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->outcome, Outcome::kPass) << ok->message;
  auto hung = run.Find("facts", "gpu002", "collected");
  ASSERT_TRUE(hung.has_value());
  EXPECT_EQ(hung->outcome, Outcome::kHang) << hung->message;
  EXPECT_NE(hung->message.find("asked twice"), std::string::npos) << hung->message;
}

}  // namespace
}  // namespace cc
