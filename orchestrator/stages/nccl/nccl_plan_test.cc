#include "orchestrator/stages/nccl/nccl_plan.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "build_paths.h"
#include "common/bandwidth.h"

namespace cc {
namespace {

using Json = nlohmann::json;

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(CLUSTERCHECK_FIXTURES) + "/nccl/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Json Size(uint64_t bytes, double time_us, int nranks, bool ok = true) {
  double secs = time_us / 1e6;
  return {{"bytes", bytes},
          {"time_us", time_us},
          {"algbw", AlgBandwidthGBps(bytes, secs)},
          {"busbw", BusBandwidthGBps(Collective::kAllReduce, bytes, secs, nranks)},
          {"data_ok", ok}};
}

RankReport Rank(const std::string& node, Outcome o, const std::string& log = "") {
  RankReport r;
  r.node = node;
  r.outcome = o;
  r.log = log;
  if (o == Outcome::kPass) {
    r.sizes = Json::array({Size(1 << 20, 4500, 2), Size(64 << 20, 36000, 2)});
  }
  return r;
}

Json Typed(Json size, const std::string& dtype) {
  size["dtype"] = dtype;
  return size;
}

TEST(NcclPlan, SocketPairPassesWithBusbwOfTheLargestSizeAndTheTransport) {
  auto j = JudgeNcclTest({Rank("a", Outcome::kPass, Fixture("socket-2hosts-1gpu-rank0.log")),
                          Rank("b", Outcome::kPass, Fixture("socket-2hosts-1gpu-rank1.log"))},
                         2, {});
  EXPECT_EQ(j.outcome, Outcome::kPass) << j.message;
  ASSERT_TRUE(j.busbw.has_value());
  // 64 MiB in 36 ms, two ranks: algbw = busbw = 67108864 / 0.036 / 1e9.
  EXPECT_NEAR(*j.busbw, 67108864 / 0.036 / 1e9, 1e-9);
  EXPECT_EQ(j.log.network, "Socket");
  EXPECT_EQ(j.log.nnodes, 2);
  EXPECT_EQ(j.evidence["transport"]["paths"], Json::array({"NET/Socket"}));
  EXPECT_NE(j.message.find("via NET/Socket"), std::string::npos) << j.message;
}

TEST(NcclPlan, RequireGdrdmaFailsASocketPairQuotingTheLines) {
  TransportPolicy p;
  p.require_gdrdma = true;
  auto j = JudgeNcclTest({Rank("a", Outcome::kPass, Fixture("socket-2hosts-1gpu-rank0.log")),
                          Rank("b", Outcome::kPass, Fixture("socket-2hosts-1gpu-rank1.log"))},
                         2, p);
  EXPECT_EQ(j.outcome, Outcome::kFail);
  ASSERT_FALSE(j.transport.evidence.empty());
  EXPECT_NE(j.transport.evidence[0].find("NET/Socket"), std::string::npos);
  EXPECT_FALSE(j.evidence["transport"]["lines"].empty());
}

TEST(NcclPlan, WrongNodeCountInTheLogWarns) {
  auto j = JudgeNcclTest({Rank("a", Outcome::kPass, Fixture("socket-2hosts-1gpu-rank0.log")),
                          Rank("b", Outcome::kPass), Rank("c", Outcome::kPass)},
                         3, {});
  EXPECT_EQ(j.outcome, Outcome::kWarn);
  EXPECT_NE(j.message.find("nNodes 2, expected 3"), std::string::npos) << j.message;
}

TEST(NcclPlan, TheNodeThatFailedWhileOthersHungIsTheCulprit) {
  RankReport bad = Rank("b", Outcome::kFail);
  bad.step = "init";
  bad.reason = "ncclCommInitRank: unhandled system error";
  RankReport a = Rank("a", Outcome::kHang), c = Rank("c", Outcome::kHang);
  a.sizes = c.sizes = Json::array();
  auto j = JudgeNcclTest({a, bad, c}, 3, {});
  EXPECT_EQ(j.outcome, Outcome::kHang);
  EXPECT_EQ(j.culprits, std::vector<std::string>{"b"});
  EXPECT_NE(j.message.find("b: fail at init (ncclCommInitRank"), std::string::npos) << j.message;
  EXPECT_FALSE(j.busbw.has_value());
}

TEST(NcclPlan, AWrongSumOnAnyRankFailsTheTest) {
  RankReport a = Rank("a", Outcome::kPass), b = Rank("b", Outcome::kPass);
  b.sizes[1]["data_ok"] = false;
  auto j = JudgeNcclTest({a, b}, 2, {});
  EXPECT_EQ(j.outcome, Outcome::kFail);
  EXPECT_EQ(j.sizes[1]["data_ok"], false);
}

// A size after check_iters checked iterations, `bad` of them not exact.
Json Checked(Json size, int checked, int bad) {
  size["checked_iters"] = checked;
  size["check_mismatches"] = bad;
  if (bad > 0) size["data_ok"] = false;
  return size;
}

TEST(NcclPlan, AMismatchInACheckedIterationFailsTheTestAndIsInTheEvidence) {
  RankReport a = Rank("a", Outcome::kPass), b = Rank("b", Outcome::kPass);
  for (RankReport* r : {&a, &b}) {
    for (Json& s : r->sizes) s = Checked(s, 100, 0);
  }
  b.sizes[1] = Checked(b.sizes[1], 100, 2);
  // b's agent failed its run at the data check, naming the iteration.
  b.outcome = Outcome::kFail;
  b.step = "data check";
  b.reason =
      "data check failed at 67108864 bytes: 2 of 100 checked iterations not exact, first "
      "iteration 37 (...)";
  auto j = JudgeNcclTest({a, b}, 2, {});
  EXPECT_EQ(j.outcome, Outcome::kFail);
  EXPECT_NE(j.message.find("first iteration 37"), std::string::npos) << j.message;
  ASSERT_EQ(j.evidence["sizes"].size(), 2u);
  const Json& big = j.evidence["sizes"][1];
  EXPECT_EQ(big["checked_iters"], 100);
  EXPECT_EQ(big["check_mismatches"], 2);
  EXPECT_EQ(big["data_ok"], false);
  EXPECT_EQ(j.evidence["sizes"][0]["checked_iters"], 100);
  EXPECT_EQ(j.evidence["sizes"][0]["check_mismatches"], 0);
  EXPECT_EQ(j.evidence["ranks"]["b"]["step"], "data check");
}

TEST(NcclPlan, ACheckedMismatchFailsEvenWhenTheRankAndDataOkSayPass) {
  // Judged on check_mismatches itself, not only on what data_ok folds in.
  RankReport a = Rank("a", Outcome::kPass), b = Rank("b", Outcome::kPass);
  b.sizes[1]["checked_iters"] = 10;
  b.sizes[1]["check_mismatches"] = 1;
  auto j = JudgeNcclTest({a, b}, 2, {});
  EXPECT_EQ(j.outcome, Outcome::kFail);
  EXPECT_EQ(j.message,
            "AllReduce data check failed (sums not exact); 1 of 10 checked iterations not exact "
            "at 64M");
  EXPECT_EQ(j.sizes[1]["data_ok"], false);
  EXPECT_EQ(j.sizes[1]["checked_iters"], 10) << "the rank without the field does not count";
}

TEST(NcclPlan, SizesFromAnAgentBeforeCheckItersCarryNoCheckedFields) {
  auto j = JudgeNcclTest({Rank("a", Outcome::kPass), Rank("b", Outcome::kPass)}, 2, {});
  EXPECT_FALSE(j.sizes[0].contains("checked_iters"));
  EXPECT_FALSE(j.sizes[0].contains("check_mismatches"));
}

TEST(NcclPlan, ADtypeWhoseCheckedIterationsMismatchedIsNotExact) {
  RankReport a = Rank("a", Outcome::kPass);
  a.sizes = Json::array({Typed(Checked(Size(64 << 20, 36000, 1), 5, 0), "float"),
                         Typed(Checked(Size(64 << 20, 18000, 1), 5, 1), "bf16")});
  a.sizes[1]["data_ok"] = true;  // only check_mismatches says it
  a.outcome = Outcome::kFail;
  a.step = "data check";
  auto j = JudgeNcclTestByDtype({a}, 1, {}, {"float", "bf16"});
  EXPECT_EQ(j.outcome, Outcome::kPass) << j.message;
  ASSERT_EQ(j.other_dtypes.size(), 1u);
  EXPECT_EQ(j.other_dtypes[0].outcome, Outcome::kFail) << "bf16 keeps the rank's failure";
}

TEST(NcclPlan, TheSlowestRankSetsTheBusbw) {
  RankReport a = Rank("a", Outcome::kPass), b = Rank("b", Outcome::kPass);
  b.sizes[1] = Size(64 << 20, 72000, 2);
  auto j = JudgeNcclTest({a, b}, 2, {});
  EXPECT_NEAR(*j.busbw, 67108864 / 0.072 / 1e9, 1e-9);
  EXPECT_DOUBLE_EQ(j.sizes[1]["time_us"].get<double>(), 72000);
}

TEST(NcclPlan, AMultiNodePassWithoutALogCannotProveAPolicy) {
  TransportPolicy p;
  p.require_net = "IB";
  EXPECT_EQ(JudgeNcclTest({Rank("a", Outcome::kPass), Rank("b", Outcome::kPass)}, 2, p).outcome,
            Outcome::kFail);
  EXPECT_EQ(JudgeNcclTest({Rank("a", Outcome::kPass), Rank("b", Outcome::kPass)}, 2, {}).outcome,
            Outcome::kWarn);
}

TEST(NcclPlan, BusbwBelowTheFloorFailsAndBelowTheMedianWarns) {
  NcclSettings s;
  std::string why;
  EXPECT_EQ(JudgeBusbw(10, 10, s, &why), Outcome::kPass);
  EXPECT_EQ(JudgeBusbw(7.9, 10, s, &why), Outcome::kWarn);
  EXPECT_NE(why.find("median 10.00"), std::string::npos) << why;
  s.min_busbw_gbps = 20;
  EXPECT_EQ(JudgeBusbw(10, 10, s, &why), Outcome::kFail);
  EXPECT_NE(why.find("min_busbw_gbps 20.00"), std::string::npos) << why;
  s.min_busbw_gbps = 0;
  EXPECT_EQ(JudgeBusbw(1, 0, s, &why), Outcome::kPass) << "no median, no floor";
}

TEST(NcclPlan, NodeEnvBeatsStageEnvBeatsTheNicSelection) {
  std::map<std::string, std::string> sel = {{"NCCL_SOCKET_IFNAME", "eth1"},
                                            {"NCCL_IB_HCA", "mlx5_0"},
                                            {"NCCL_IB_GID_INDEX", ""},
                                            {"NCCL_IB_TC", "106"}};
  auto env = NcclEnvFor(sel, {{"NCCL_IB_HCA", "mlx5_2"}, {"NCCL_ALGO", "Ring"}},
                        {{"NCCL_SOCKET_IFNAME", "lo"}, {"PATH", "/bin"}, {"NCCL_HOSTID", "h1"}});
  EXPECT_EQ(env["NCCL_SOCKET_IFNAME"], "lo");
  EXPECT_EQ(env["NCCL_IB_HCA"], "mlx5_2");
  EXPECT_EQ(env["NCCL_ALGO"], "Ring");
  EXPECT_EQ(env["NCCL_HOSTID"], "h1");
  EXPECT_EQ(env.count("PATH"), 0u);
  EXPECT_EQ(env.count("NCCL_IB_GID_INDEX"), 0u) << "the NIC stage's \"\" means none";
  EXPECT_EQ(env["NCCL_IB_TC"], "106");
  EXPECT_EQ(NcclEnvFor(sel, {}, {})["NCCL_SOCKET_IFNAME"], "eth1");
}

TEST(NcclPlan, GpusComeFromTheFactsAndANodeWithoutOneSaysWhy) {
  std::string why;
  Json h200 = {{"gpu", {{"status", "ok"}, {"count", 8}}}, {"nccl", {{"status", "ok"}}}};
  EXPECT_EQ(GpusToUse(h200, std::nullopt, &why), 8);
  EXPECT_EQ(GpusToUse(h200, 2, &why), 2);
  Json none = {{"gpu", {{"status", "absent"}, {"reason", "libnvidia-ml.so.1 not found"}}}};
  EXPECT_EQ(GpusToUse(none, std::nullopt, &why), 0);
  EXPECT_EQ(why, "no GPU: the facts say gpu absent (libnvidia-ml.so.1 not found)");
  Json no_nccl = {{"gpu", {{"status", "ok"}, {"count", 1}}},
                  {"nccl", {{"status", "absent"}, {"reason", "libnccl.so.2 not found"}}}};
  EXPECT_EQ(GpusToUse(no_nccl, std::nullopt, &why), 0);
  EXPECT_NE(why.find("libnccl.so.2 not found"), std::string::npos);
  EXPECT_EQ(GpusToUse(Json(), std::nullopt, &why), 0);
  EXPECT_NE(why.find("facts"), std::string::npos);
}

TEST(NcclPlan, SettingsHaveDefaultsAndRejectWhatTypesCannotCatch) {
  auto d = ReadNcclSettings(Json::object());
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->sizes.size(), 3u);
  EXPECT_TRUE(d->Has("isolate"));
  auto s = ReadNcclSettings({{"sizes", "1K-4K"},
                             {"phases", {"pairs"}},
                             {"require_gdrdma", true},
                             {"min_busbw_gbps", 40}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->sizes, (std::vector<uint64_t>{1024, 2048, 4096}));
  EXPECT_FALSE(s->Has("intra"));
  EXPECT_TRUE(s->policy.require_gdrdma);
  EXPECT_DOUBLE_EQ(s->min_busbw_gbps, 40);
  EXPECT_FALSE(ReadNcclSettings({{"sizes", {6}}}).ok());
  EXPECT_FALSE(ReadNcclSettings({{"phases", {"bisect"}}}).ok());
  EXPECT_EQ(ReadNcclSettings({})->launcher, "agent");
  EXPECT_EQ(ReadNcclSettings({{"launcher", "mpirun"}})->launcher, "mpirun");
  EXPECT_FALSE(ReadNcclSettings({{"launcher", "srun"}}).ok());
  EXPECT_FALSE(ReadNcclSettings({{"env", {{"LD_PRELOAD", "x"}}}}).ok());
  EXPECT_EQ(d->check_iters, 0);
  EXPECT_EQ(ReadNcclSettings({{"check_iters", 500}})->check_iters, 500);
  EXPECT_FALSE(ReadNcclSettings({{"check_iters", -1}}).ok());
}

TEST(NcclPlan, CheckedIterationsLengthenTheAgentsDeadlines) {
  NcclSettings s;
  s.sizes = {1024, 4096};
  s.dtypes = {"float", "bf16"};
  s.timeout_s = 10;
  // init + finalize + 4 size steps.
  EXPECT_DOUBLE_EQ(NcclAgentDeadlinesS(s), 10 * (2 + 4));
  s.check_iters = 3;
  // Each size step adds 3 checked iterations of their own deadline.
  EXPECT_DOUBLE_EQ(NcclAgentDeadlinesS(s), 10 * (2 + 4 * 4));
}

TEST(NcclPlan, DtypesDefaultToFloatAndAnUnknownOneIsNamed) {
  EXPECT_EQ(ReadNcclSettings(Json::object())->dtypes, std::vector<std::string>{"float"});
  auto s = ReadNcclSettings({{"dtypes", {"float", "bf16", "half"}}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->dtypes, (std::vector<std::string>{"float", "bf16", "half"}));
  for (const Json& bad : {Json{"float", "fp8"}, Json{"bf16", "bf16"}, Json::array()}) {
    auto r = ReadNcclSettings({{"dtypes", bad}});
    ASSERT_FALSE(r.ok()) << bad.dump();
    EXPECT_EQ(r.status().kind(), ErrorKind::kBadInventory);
    EXPECT_NE(r.status().message().find("stages.nccl.dtypes"), std::string::npos);
  }
  auto r = ReadNcclSettings({{"dtypes", {"fp8"}}});
  EXPECT_NE(r.status().message().find("'fp8'"), std::string::npos) << r.status().message();
}

TEST(NcclPlan, EachDtypeIsJudgedOnItsOwnSizes) {
  RankReport a = Rank("a", Outcome::kPass), b = Rank("b", Outcome::kPass);
  for (RankReport* r : {&a, &b}) {
    r->sizes = Json::array({Typed(Size(64 << 20, 36000, 2), "float"),
                            Typed(Size(64 << 20, 18000, 2), "bf16"),
                            Typed(Size(64 << 20, 72000, 2), "half")});
  }
  // b's half data was wrong: its agent failed the run at the data check.
  b.sizes[2]["data_ok"] = false;
  b.outcome = Outcome::kFail;
  b.step = "data check";
  b.reason = "data check failed at half 67108864 bytes: ...";
  auto j = JudgeNcclTestByDtype({a, b}, 1, {}, {"float", "bf16", "half"});
  EXPECT_EQ(j.dtype, "float");
  EXPECT_EQ(j.outcome, Outcome::kPass) << j.message;
  EXPECT_NEAR(*j.busbw, 67108864 / 0.036 / 1e9, 1e-9);
  EXPECT_FALSE(j.evidence.contains("dtype")) << "float's evidence is as before dtypes";
  ASSERT_EQ(j.other_dtypes.size(), 2u);
  const TestJudgement& bf16 = j.other_dtypes[0];
  EXPECT_EQ(bf16.dtype, "bf16");
  EXPECT_EQ(bf16.outcome, Outcome::kPass) << bf16.message;
  EXPECT_NEAR(*bf16.busbw, 67108864 / 0.018 / 1e9, 1e-9);
  EXPECT_EQ(bf16.evidence["dtype"], "bf16");
  ASSERT_EQ(bf16.sizes.size(), 1u);
  const TestJudgement& half = j.other_dtypes[1];
  EXPECT_EQ(half.dtype, "half");
  EXPECT_EQ(half.outcome, Outcome::kFail);
  EXPECT_NE(half.message.find("data check"), std::string::npos) << half.message;
}

TEST(NcclPlan, FloatAloneIsJudgedAsBeforeDtypes) {
  RankReport a = Rank("a", Outcome::kPass), b = Rank("b", Outcome::kPass);
  b.sizes[1]["data_ok"] = false;
  b.outcome = Outcome::kFail;
  b.step = "data check";
  auto before = JudgeNcclTest({a, b}, 2, {});
  auto now = JudgeNcclTestByDtype({a, b}, 2, {}, {"float"});
  EXPECT_EQ(now.outcome, before.outcome);
  EXPECT_EQ(now.message, before.message);
  EXPECT_EQ(now.evidence, before.evidence);
  EXPECT_TRUE(now.other_dtypes.empty());
}

TEST(NcclPlan, CheckNamesCarryEveryDtypeButFloat) {
  EXPECT_EQ(NcclCheckName("allreduce", "float"), "allreduce");
  EXPECT_EQ(NcclCheckName("allreduce", "bf16"), "allreduce.bf16");
  EXPECT_EQ(NcclCheckName("cluster", "half"), "cluster.half");
}

}  // namespace
}  // namespace cc
