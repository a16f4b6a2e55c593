#include "agent/nccl_request.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>

namespace cc::agent {
namespace {

using nlohmann::json;

std::string Id() { return std::string(2 * kNcclUniqueIdBytes, 'a'); }

TEST(NcclRequest, MinimalRequestGetsDefaults) {
  auto r = ParseNcclRequest({{"nranks", 1}, {"gpus", {0}}, {"sizes", {1024}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->nranks, 1);
  EXPECT_EQ(r->rank_base, 0);
  EXPECT_EQ(r->gpus, std::vector<int>{0});
  EXPECT_EQ(r->sizes, std::vector<uint64_t>{1024});
  EXPECT_TRUE(r->unique_id_hex.empty());
  EXPECT_GT(r->iters, 0);
  EXPECT_GT(r->timeout_s, 0);
  EXPECT_EQ(r->dtypes, std::vector<NcclDtype>{NcclDtype::kFloat});
  EXPECT_EQ(r->check_iters, 0) << "no checked iterations unless asked";
}

TEST(NcclRequest, DtypesParseInOrderAndBf16CarriesNcclBfloat16) {
  auto r = ParseNcclRequest({{"nranks", 2}, {"dtypes", {"bf16", "float", "half"}}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->dtypes,
            (std::vector<NcclDtype>{NcclDtype::kBf16, NcclDtype::kFloat, NcclDtype::kHalf}));
  EXPECT_EQ(NcclDataType(r->dtypes[0]), ncclBfloat16);
  EXPECT_EQ(NcclDataType(r->dtypes[1]), ncclFloat);
  EXPECT_EQ(NcclDataType(r->dtypes[2]), ncclFloat16);
}

TEST(NcclRequest, FullRequestParses) {
  json args = {{"rank_base", 2},
               {"nranks", 4},
               {"gpus", {0, 1}},
               {"unique_id", Id()},
               {"sizes", {8, 1 << 20}},
               {"iters", 3},
               {"warmup", 0},
               {"check_iters", 50},
               {"timeout_s", 2.5},
               {"env", {{"NCCL_SOCKET_IFNAME", "lo"}, {"NCCL_NVLS_ENABLE", 0}}},
               {"library_paths", {"/opt/nccl/lib"}}};
  auto r = ParseNcclRequest(args);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rank_base, 2);
  EXPECT_EQ(r->gpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(r->unique_id_hex, Id());
  EXPECT_EQ(r->iters, 3);
  EXPECT_EQ(r->warmup, 0);
  EXPECT_EQ(r->check_iters, 50);
  EXPECT_DOUBLE_EQ(r->timeout_s, 2.5);
  ASSERT_EQ(r->env.size(), 2u);
  std::map<std::string, std::string> env(r->env.begin(), r->env.end());
  EXPECT_EQ(env["NCCL_NVLS_ENABLE"], "0");
  EXPECT_EQ(r->library_paths, std::vector<std::string>{"/opt/nccl/lib"});
}

TEST(NcclRequest, BadArgumentsNameTheField) {
  struct Case {
    json args;
    const char* field;
  };
  std::vector<Case> cases = {
      {json::object(), "nranks"},
      {{{"nranks", 0}}, "nranks"},
      {{{"nranks", "2"}}, "nranks"},
      {{{"nranks", 2}, {"gpus", {0, 0}}}, "gpus"},
      {{{"nranks", 2}, {"gpus", {-1}}}, "gpus"},
      {{{"nranks", 2}, {"gpus", json::array()}}, "gpus"},
      {{{"nranks", 2}, {"rank_base", 1}, {"gpus", {0, 1}}, {"unique_id", Id()}}, "rank_base"},
      {{{"nranks", 2}, {"rank_base", 1}}, "unique_id"},
      {{{"nranks", 2}, {"unique_id", "abc"}}, "unique_id"},
      {{{"nranks", 2}, {"unique_id", std::string(256, 'g')}}, "unique_id"},
      {{{"nranks", 2}, {"sizes", {6}}}, "sizes"},
      {{{"nranks", 2}, {"sizes", {0}}}, "sizes"},
      {{{"nranks", 2}, {"sizes", {"1M"}}}, "sizes"},
      {{{"nranks", 2}, {"dtypes", "bf16"}}, "dtypes"},
      {{{"nranks", 2}, {"dtypes", json::array()}}, "dtypes"},
      {{{"nranks", 2}, {"dtypes", {"fp8"}}}, "fp8"},
      {{{"nranks", 2}, {"dtypes", {"half", "half"}}}, "dtypes"},
      {{{"nranks", 2}, {"dtypes", {16}}}, "dtypes"},
      {{{"nranks", 2}, {"iters", 0}}, "iters"},
      {{{"nranks", 2}, {"check_iters", -1}}, "check_iters"},
      {{{"nranks", 2}, {"check_iters", 2.5}}, "check_iters"},
      {{{"nranks", 2}, {"check_iters", "100"}}, "check_iters"},
      {{{"nranks", 2}, {"check_iters", 20000000}}, "check_iters"},
      {{{"nranks", 2}, {"timeout_s", 0}}, "timeout_s"},
      {{{"nranks", 2}, {"timeout_s", "soon"}}, "timeout_s"},
      {{{"nranks", 2}, {"env", {{"LD_PRELOAD", "x.so"}}}}, "env"},
      {{{"nranks", 2}, {"env", {{"NCCL_X", json::array()}}}}, "env"},
      {{{"nranks", 2}, {"library_paths", "/opt"}}, "library_paths"},
  };
  for (const auto& c : cases) {
    auto r = ParseNcclRequest(c.args);
    ASSERT_FALSE(r.ok()) << c.args.dump();
    EXPECT_EQ(r.status().kind(), ErrorKind::kBadArgument);
    EXPECT_NE(r.status().message().find(c.field), std::string::npos)
        << c.args.dump() << " -> " << r.status().message();
  }
}

TEST(NcclRequest, CheckItersOfZeroIsAllowedAndMeansNone) {
  auto r = ParseNcclRequest({{"nranks", 1}, {"check_iters", 0}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->check_iters, 0);
}

TEST(NcclRequest, HexRoundTripsA128ByteId) {
  std::vector<uint8_t> id(kNcclUniqueIdBytes);
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<uint8_t>(i * 37 + 5);
  std::string hex = HexEncode(id.data(), id.size());
  EXPECT_EQ(hex.size(), 256u);
  auto back = HexDecode(hex, kNcclUniqueIdBytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, id);
  EXPECT_FALSE(HexDecode(hex.substr(2), kNcclUniqueIdBytes).ok());
  hex[7] = 'z';
  EXPECT_FALSE(HexDecode(hex, kNcclUniqueIdBytes).ok());
}

TEST(NcclRequest, PatternSumsExactlyForEveryElement) {
  for (int n : {1, 2, 3, 8, 64, kMaxExactRanks}) {
    for (size_t i = 0; i < 20; ++i) {
      // Sum in float, in an order NCCL might use; must equal the formula.
      float sum = 0;
      for (int r = n - 1; r >= 0; --r) sum += NcclFillValue(r, i);
      ASSERT_EQ(sum, NcclExpectedSum(n, i)) << "n=" << n << " i=" << i;
    }
  }
}

TEST(NcclRequest, MismatchesAreCountedAndTheFirstIsNamed) {
  std::vector<float> got(100);
  for (size_t i = 0; i < got.size(); ++i) got[i] = NcclExpectedSum(4, 1000 + i);
  size_t first = 0;
  EXPECT_EQ(CountMismatches(got.data(), got.size(), 1000, 4, &first), 0u);
  got[17] += 1;
  got[60] = std::numeric_limits<float>::quiet_NaN();  // never equals
  EXPECT_EQ(CountMismatches(got.data(), got.size(), 1000, 4, &first), 2u);
  EXPECT_EQ(first, 1017u);
}

TEST(NcclRequest, EnvironmentForcesDebugAndKeepsExtraSubsystems) {
  NcclRequest r;
  r.env = {{"NCCL_SOCKET_IFNAME", "lo"},
           {"NCCL_DEBUG", "WARN"},
           {"NCCL_DEBUG_SUBSYS", "P2P"},
           {"NCCL_COMM_BLOCKING", "1"}};
  auto env = NcclEnvironment(r, "/tmp/x");
  std::map<std::string, std::string> m(env.begin(), env.end());
  EXPECT_EQ(m["NCCL_SOCKET_IFNAME"], "lo");
  EXPECT_EQ(m["NCCL_DEBUG"], "INFO");
  EXPECT_EQ(m["NCCL_DEBUG_SUBSYS"], "P2P,INIT,NET");
  EXPECT_EQ(m["NCCL_DEBUG_FILE"], "/tmp/x/nccl-%h-%p.log");
  EXPECT_EQ(m["NCCL_COMM_BLOCKING"], "0");
  r.env.clear();
  env = NcclEnvironment(r, "/d");
  m = {env.begin(), env.end()};
  EXPECT_EQ(m["NCCL_DEBUG_SUBSYS"], "INIT,NET");
}

TEST(NcclRequest, LibraryFilesGoOnlyToTheirOwnLibrary) {
  std::vector<std::string> paths = {"/opt/nccl/lib", "/x/libnccl.so.2", "/usr/lib/libcuda.so.1",
                                    "/lib64/"};
  EXPECT_EQ(LibraryPathsFor(paths, "libnccl.so"),
            (std::vector<std::string>{"/opt/nccl/lib", "/x/libnccl.so.2", "/lib64/"}));
  EXPECT_EQ(LibraryPathsFor(paths, "libcuda.so"),
            (std::vector<std::string>{"/opt/nccl/lib", "/usr/lib/libcuda.so.1", "/lib64/"}));
}

TEST(NcclRequest, LongLogsKeepHeadAndTail) {
  std::string text = "HEAD" + std::string(5000, 'x') + "TAIL";
  std::string cut = CapLog(text, 1000);
  EXPECT_LE(cut.size(), 1000u);
  EXPECT_EQ(cut.substr(0, 4), "HEAD");
  EXPECT_EQ(cut.substr(cut.size() - 4), "TAIL");
  EXPECT_NE(cut.find("5008 bytes"), std::string::npos);
  EXPECT_EQ(CapLog("short", 1000), "short");
}

}  // namespace
}  // namespace cc::agent
