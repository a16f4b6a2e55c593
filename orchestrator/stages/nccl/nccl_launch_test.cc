#include "orchestrator/stages/nccl/nccl_launch.h"

#include <gtest/gtest.h>

#include "agent/nccl_request.h"

namespace cc {
namespace {

using Json = nlohmann::json;

NcclMember Member() {
  NcclMember m;
  m.name = "gpu002";
  m.gpus = 2;
  m.env = {{"NCCL_SOCKET_IFNAME", "eth1"}};
  m.library_paths = {"/opt/nccl/lib"};
  return m;
}

TEST(NcclAgentArgs, CarriesTheSettingsAndTheMembersRanks) {
  NcclSettings s;
  s.sizes = {1024, 4096};
  s.iters = 3;
  s.warmup = 1;
  s.timeout_s = 7;
  Json a = NcclAgentArgs(Member(), 4, 2, s);
  EXPECT_EQ(a["nranks"], 4);
  EXPECT_EQ(a["rank_base"], 2);
  EXPECT_EQ(a["gpus"], Json({0, 1}));
  EXPECT_EQ(a["sizes"], Json({1024, 4096}));
  EXPECT_EQ(a["iters"], 3);
  EXPECT_EQ(a["warmup"], 1);
  EXPECT_EQ(a["check_iters"], 0);
  EXPECT_EQ(a["timeout_s"], 7.0);
  EXPECT_EQ(a["env"]["NCCL_SOCKET_IFNAME"], "eth1");
  EXPECT_EQ(a["library_paths"], Json({"/opt/nccl/lib"}));
  EXPECT_FALSE(a.contains("dtypes")) << "float alone: the request as before dtypes";
  EXPECT_FALSE(a.contains("unique_id")) << "the caller adds the id";
}

TEST(NcclAgentArgs, PassesCheckItersThatTheAgentAccepts) {
  NcclSettings s;
  s.check_iters = 1000;
  Json a = NcclAgentArgs(Member(), 2, 0, s);
  EXPECT_EQ(a["check_iters"], 1000);
  // What the controller sends, the agent's parser takes as meant.
  auto r = agent::ParseNcclRequest(a);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->check_iters, 1000);
  EXPECT_EQ(r->gpus, (std::vector<int>{0, 1}));
}

TEST(AddNcclResult, KeepsTheSizesCheckedIterations) {
  RankReport rep;
  Json size = {{"bytes", 1024}, {"data_ok", false}, {"checked_iters", 5}, {"check_mismatches", 1}};
  EXPECT_FALSE(AddNcclResult("size", size, &rep));
  ASSERT_EQ(rep.sizes.size(), 1u);
  EXPECT_EQ(rep.sizes[0]["check_mismatches"], 1);
  EXPECT_TRUE(AddNcclResult("outcome", {{"outcome", "fail"}, {"step", "data check"}}, &rep));
  EXPECT_EQ(rep.outcome, Outcome::kFail);
}

}  // namespace
}  // namespace cc
