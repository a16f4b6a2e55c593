// The `nccl` and `nccl_id` commands through a fake context. Without a GPU
// (CI) they must end in a clean skip naming what was searched; on a GPU
// machine a one-rank AllReduce must pass its data check.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <thread>

#include "agent/commands_decl.h"

namespace cc::agent {
namespace {

class FakeContext : public CommandContext {
 public:
  const std::string& root() const override { return root_; }
  void Result(const std::string& name, const Json& data) override {
    results.push_back({name, data});
  }
  void Log(const std::string& level, const std::string& msg) override {
    logs.push_back(level + ": " + msg);
  }
  void Progress(int64_t, int64_t, const std::string& what) override { progress.push_back(what); }
  // The controller is there but silent: wait out the deadline.
  std::optional<Json> NextControl(Deadline deadline) override {
    std::this_thread::sleep_until(deadline.at());
    return std::nullopt;
  }
  const Json* Find(const std::string& name) const {
    for (const auto& [n, d] : results) {
      if (n == name) return &d;
    }
    return nullptr;
  }

  std::vector<std::pair<std::string, Json>> results;
  std::vector<std::string> logs;
  std::vector<std::string> progress;

 private:
  std::string root_;
};

// A directory holding `name` as a link to libm: a library that loads
// anywhere and has none of the CUDA or NCCL entry points.
class ImpostorDir {
 public:
  explicit ImpostorDir(const std::string& name) {
    char tmpl[] = "/tmp/cc-nccl-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    void* h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    link_map* lm = nullptr;
    if (h != nullptr && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != nullptr) {
      link_ = dir_ + "/" + name;
      ok_ = symlink(lm->l_name, link_.c_str()) == 0;
    }
  }
  ~ImpostorDir() {
    unlink(link_.c_str());
    rmdir(dir_.c_str());
  }
  bool ok() const { return ok_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, link_;
  bool ok_ = false;
};

TEST(NcclCommand, RunsOrSkipsCleanlyNamingWhatWasSearched) {
  FakeContext ctx;
  Status s = RunNccl({{"nranks", 1},
                      {"gpus", {0}},
                      {"sizes", {1024, 4096}},
                      {"iters", 2},
                      {"warmup", 1},
                      {"timeout_s", 30}},
                     ctx);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_FALSE(ctx.results.empty());
  EXPECT_EQ(ctx.results.back().first, "outcome") << "the outcome comes last";
  const Json& outcome = ctx.results.back().second;
  std::string o = outcome.value("outcome", "");
  if (o == "skip") {
    std::string reason = outcome.value("reason", "");
    EXPECT_TRUE(reason.find("libcuda.so.1") != std::string::npos ||
                reason.find("libnccl.so.2") != std::string::npos ||
                reason.find("cuInit") != std::string::npos)
        << reason;
    EXPECT_TRUE(outcome.contains("step"));
    return;
  }
  ASSERT_EQ(o, "pass") << outcome.dump();
  int sizes = 0;
  for (const auto& [name, data] : ctx.results) {
    if (name != "size") continue;
    ++sizes;
    EXPECT_TRUE(data["data_ok"].get<bool>()) << data.dump();
    EXPECT_GT(data["time_us"].get<double>(), 0.0);
  }
  EXPECT_EQ(sizes, 2);
  ASSERT_NE(ctx.Find("nccl_id"), nullptr) << "rank 0's process makes the id";
  ASSERT_NE(ctx.Find("nccl_log"), nullptr);
  EXPECT_NE((*ctx.Find("nccl_log"))["text"].get<std::string>().find("NCCL INFO"),
            std::string::npos);
}

TEST(NcclCommand, EachDtypeRunsEverySizeAndSaysItsType) {
  FakeContext ctx;
  Status s = RunNccl({{"nranks", 1},
                      {"sizes", {1024, 4096}},
                      {"dtypes", {"float", "bf16", "half"}},
                      {"iters", 2},
                      {"warmup", 1},
                      {"timeout_s", 30}},
                     ctx);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_FALSE(ctx.results.empty());
  const Json& outcome = ctx.results.back().second;
  if (outcome.value("outcome", "") == "skip") return;  // no GPU: the test above says why
  ASSERT_EQ(outcome.value("outcome", ""), "pass") << outcome.dump();
  std::vector<std::string> seen;
  for (const auto& [name, data] : ctx.results) {
    if (name != "size") continue;
    seen.push_back(data["dtype"].get<std::string>() + "/" + data["bytes"].dump());
    EXPECT_TRUE(data["data_ok"].get<bool>()) << data.dump();
    EXPECT_EQ(data["count"].get<uint64_t>() * (data["dtype"] == "float" ? 4 : 2),
              data["bytes"].get<uint64_t>());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"float/1024", "float/4096", "bf16/1024", "bf16/4096",
                                            "half/1024", "half/4096"}));
}

TEST(NcclCommand, CheckedIterationsAreEachCheckedAndCounted) {
  FakeContext ctx;
  Status s = RunNccl({{"nranks", 1},
                      {"sizes", {1024, 4096}},
                      {"dtypes", {"float", "bf16"}},
                      {"iters", 2},
                      {"warmup", 1},
                      {"check_iters", 3},
                      {"timeout_s", 30}},
                     ctx);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_FALSE(ctx.results.empty());
  const Json& outcome = ctx.results.back().second;
  if (outcome.value("outcome", "") == "skip") return;  // no GPU: the first test says why
  ASSERT_EQ(outcome.value("outcome", ""), "pass") << outcome.dump();
  int sizes = 0;
  for (const auto& [name, data] : ctx.results) {
    if (name != "size") continue;
    ++sizes;
    EXPECT_EQ(data["checked_iters"], 3) << data.dump();
    EXPECT_EQ(data["check_mismatches"], 0) << data.dump();
    EXPECT_EQ(data["iters"], 2) << "checked iterations are not timed";
    EXPECT_TRUE(data["data_ok"].get<bool>()) << data.dump();
  }
  EXPECT_EQ(sizes, 4);
}

TEST(NcclCommand, ALibraryWithoutTheDriverApiIsASkipListingMissingSymbols) {
  FakeContext ctx;
  ImpostorDir fake("libcuda.so.1");
  ASSERT_TRUE(fake.ok());
  Status s = RunNccl({{"nranks", 1}, {"library_paths", {fake.dir()}}}, ctx);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_FALSE(ctx.results.empty());
  const Json& outcome = ctx.results.back().second;
  EXPECT_EQ(outcome.value("outcome", ""), "skip");
  std::string reason = outcome.value("reason", "");
  EXPECT_NE(reason.find("lacks cuInit"), std::string::npos) << reason;
  EXPECT_NE(reason.find("cuMemAlloc_v2"), std::string::npos) << reason;
}

TEST(NcclCommand, BadArgumentsAreAnErrorBeforeAnythingLoads) {
  FakeContext ctx;
  Status s = RunNccl({{"nranks", 2}, {"rank_base", 1}}, ctx);
  EXPECT_EQ(s.kind(), ErrorKind::kBadArgument);
  EXPECT_TRUE(ctx.results.empty());
}

TEST(NcclCommand, UniqueIdIsOneHundredTwentyEightBytesOfHex) {
  FakeContext ctx;
  ASSERT_TRUE(RunNcclId(Json::object(), ctx).ok());
  const Json& outcome = ctx.results.back().second;
  if (outcome.value("outcome", "") == "skip") {
    EXPECT_NE(outcome.value("reason", "").find("libnccl.so.2"), std::string::npos);
    return;
  }
  ASSERT_EQ(outcome.value("outcome", ""), "pass") << outcome.dump();
  const Json* id = ctx.Find("nccl_id");
  ASSERT_NE(id, nullptr);
  std::string hex = (*id)["id"];
  EXPECT_EQ(hex.size(), 256u);
  EXPECT_EQ(hex.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_FALSE(outcome.value("nccl_version", "").empty());
}

TEST(NcclCommand, ANonNcclLibraryIsASkipListingMissingSymbols) {
  FakeContext ctx;
  ImpostorDir fake("libnccl.so.2");
  ASSERT_TRUE(fake.ok());
  ASSERT_TRUE(RunNcclId({{"library_paths", {fake.dir()}}}, ctx).ok());
  const Json& outcome = ctx.results.back().second;
  EXPECT_EQ(outcome.value("outcome", ""), "skip");
  EXPECT_NE(outcome.value("reason", "").find("lacks ncclGetVersion"), std::string::npos)
      << outcome.dump();
}

}  // namespace
}  // namespace cc::agent
