#include "orchestrator/stages/nccl/nccl_mpirun.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "orchestrator/stages/mpi/mpi_launch.h"

namespace cc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

struct Group {
  NcclMember a, b;
  std::vector<NcclMember*> ptrs;
  Group() {
    a.name = "gpu001";
    a.gpus = 2;
    a.env = {{"NCCL_SOCKET_IFNAME", "eth1"}};
    a.library_paths = {"/opt/nccl/lib"};
    b.name = "gpu002";
    b.gpus = 1;
    b.env = {{"NCCL_SOCKET_IFNAME", "eth2"}};
    ptrs = {&a, &b};
  }
};

// A probe line as mpirun --tag-output forwards it.
std::string Line(int rank, const Json& j) {
  Json m = j;
  m["rank"] = rank;
  return "[1," + std::to_string(rank) + "]<stdout>:CCNCCL " + m.dump();
}

std::string OutcomeLine(int rank, const std::string& o, const std::string& why) {
  return Line(rank, {{"type", "result"},
                     {"name", "outcome"},
                     {"data", {{"outcome", o}, {"reason", why}, {"step", "x"}}}});
}

std::string Hello(int rank) { return Line(rank, {{"type", "hello"}}); }

TEST(NcclRankNodes, GivesEachMemberOneRankPerGpuInOrder) {
  Group g;
  EXPECT_THAT(NcclRankNodes(g.ptrs), ElementsAre("gpu001", "gpu001", "gpu002"));
}

TEST(NcclMpiRequest, CarriesTheSettingsAndEachRanksOwnNodeEnv) {
  Group g;
  NcclSettings s;
  s.sizes = {1024, 4096};
  s.iters = 3;
  s.timeout_s = 7;
  Json r = NcclMpiRequest(g.ptrs, s);
  EXPECT_EQ(r["sizes"], Json({1024, 4096}));
  EXPECT_EQ(r["iters"], 3);
  EXPECT_EQ(r["check_iters"], 0);
  EXPECT_EQ(r["timeout_s"], 7.0);
  ASSERT_EQ(r["ranks"].size(), 3u);
  EXPECT_EQ(r["ranks"][1]["env"]["NCCL_SOCKET_IFNAME"], "eth1");
  EXPECT_EQ(r["ranks"][1]["library_paths"], Json({"/opt/nccl/lib"}));
  EXPECT_EQ(r["ranks"][2]["env"]["NCCL_SOCKET_IFNAME"], "eth2");
  EXPECT_EQ(r["ranks"][0]["gpu"], 0);
  EXPECT_EQ(r["ranks"][1]["gpu"], 1);
  EXPECT_EQ(r["ranks"][2]["gpu"], 0);
}

TEST(NcclMpiRequest, CarriesCheckIters) {
  Group g;
  NcclSettings s;
  s.check_iters = 250;
  EXPECT_EQ(NcclMpiRequest(g.ptrs, s)["check_iters"], 250);
}

TEST(NcclMpiRequest, NamesDtypesOnlyWhenMoreThanFloatIsAsked) {
  Group g;
  NcclSettings s;
  EXPECT_FALSE(NcclMpiRequest(g.ptrs, s).contains("dtypes")) << "the request as before dtypes";
  s.dtypes = {"float", "bf16"};
  EXPECT_EQ(NcclMpiRequest(g.ptrs, s)["dtypes"], Json({"float", "bf16"}));
}

TEST(NcclMpiHostfile, GivesEachNodeOneSlotPerGpuOrOneLocalLine) {
  Group g;
  EXPECT_THAT(NcclMpiHostfile(g.ptrs, {"10.0.0.1", "10.0.0.2"}, false),
              HasSubstr("# gpu001\n10.0.0.1 slots=2\n# gpu002\n10.0.0.2 slots=1\n"));
  EXPECT_THAT(NcclMpiHostfile(g.ptrs, {"a", "b"}, true), HasSubstr("\nlocalhost slots=3\n"));
}

TEST(MpirunArgv, MapsBySlotWhenAskedSoRanksFillANodeFirst) {
  MpirunOptions o;
  o.hostfile = "/t/h";
  o.np = 3;
  o.map_by = "slot";
  o.program = "/b/clustercheck-nccl-mpi";
  o.program_args = {"--request-hex", "7b7d"};
  auto a = MpirunArgv(o);
  ASSERT_TRUE(a.ok());
  std::string joined;
  for (const auto& x : *a) joined += x + " ";
  EXPECT_THAT(joined, HasSubstr("-np 3 --map-by slot "));
  EXPECT_THAT(joined, HasSubstr("/b/clustercheck-nccl-mpi --request-hex 7b7d "));
}

TEST(ParseNcclMpirun, TakesEachRanksSizesLogSetupAndOutcome) {
  NcclMpirunOutput out;
  out.exit_code = 0;
  out.lines = {
      "some Open MPI chatter",
      Hello(0),
      Hello(1),
      Line(0, {{"type", "result"}, {"name", "setup"}, {"data", {{"nccl_version", "2.28.3"}}}}),
      Line(1, {{"type", "result"}, {"name", "size"}, {"data", {{"bytes", 1024}, {"busbw", 1.5}}}}),
      Line(1, {{"type", "result"}, {"name", "nccl_log"}, {"data", {{"text", "NCCL INFO x\n"}}}}),
      OutcomeLine(0, "pass", ""),
      OutcomeLine(1, "pass", ""),
  };
  auto reps = ParseNcclMpirun({"n1", "n2"}, out);
  ASSERT_EQ(reps.size(), 2u);
  EXPECT_EQ(reps[0].node, "n1");
  EXPECT_EQ(reps[0].outcome, Outcome::kPass);
  EXPECT_EQ(reps[0].setup["nccl_version"], "2.28.3");
  EXPECT_EQ(reps[1].node, "n2");
  ASSERT_EQ(reps[1].sizes.size(), 1u);
  EXPECT_EQ(reps[1].sizes[0]["bytes"], 1024);
  EXPECT_EQ(reps[1].log, "NCCL INFO x\n");
}

TEST(ParseNcclMpirun, JoinsTheLogPartsOfEachRankWhenTheRanksInterleave) {
  NcclMpirunOutput out;
  auto part = [](int rank, const std::string& text) {
    return Line(rank, {{"type", "result"}, {"name", "nccl_log_part"}, {"data", {{"text", text}}}});
  };
  out.lines = {
      Hello(0),
      Hello(1),
      part(0, "rank0 a\n"),
      part(1, "rank1 a\n"),
      part(0, "rank0 b: via NET/Socket/0\n"),
      part(1, "rank1 b\n"),
      Line(1, {{"type", "result"}, {"name", "nccl_log"}, {"data", {{"bytes", 16}, {"parts", 2}}}}),
      Line(0, {{"type", "result"}, {"name", "nccl_log"}, {"data", {{"bytes", 33}, {"parts", 2}}}}),
      OutcomeLine(0, "pass", ""),
      OutcomeLine(1, "pass", ""),
  };
  auto reps = ParseNcclMpirun({"n1", "n2"}, out);
  ASSERT_EQ(reps.size(), 2u);
  EXPECT_EQ(reps[0].log, "rank0 a\nrank0 b: via NET/Socket/0\n");
  EXPECT_EQ(reps[1].log, "rank1 a\nrank1 b\n");
}

TEST(ParseNcclMpirun, KeepsASkipWithItsReason) {
  NcclMpirunOutput out;
  out.exit_code = 0;
  out.lines = {Hello(0), Hello(1), OutcomeLine(0, "skip", "libcuda.so.1 not found"),
               OutcomeLine(1, "skip", "rank 0 made no NCCL id: libcuda.so.1 not found")};
  auto reps = ParseNcclMpirun({"n1", "n2"}, out);
  EXPECT_EQ(reps[0].outcome, Outcome::kSkip);
  EXPECT_EQ(reps[0].reason, "libcuda.so.1 not found");
  EXPECT_EQ(reps[1].outcome, Outcome::kSkip);
}

TEST(ParseNcclMpirun, CallsRanksWithoutAnOutcomeHungWhenMpirunWasKilled) {
  NcclMpirunOutput out;
  out.hung = true;
  out.timeout_s = 65;
  out.lines = {Hello(0), Hello(1), OutcomeLine(0, "hang", "init: no progress")};
  auto reps = ParseNcclMpirun({"n1", "n2"}, out);
  EXPECT_EQ(reps[0].outcome, Outcome::kHang);
  EXPECT_EQ(reps[0].reason, "init: no progress");
  EXPECT_EQ(reps[1].outcome, Outcome::kHang);
  EXPECT_THAT(reps[1].reason, HasSubstr("within mpirun's deadline (65 s)"));
}

TEST(ParseNcclMpirun, NamesRanksThatNeverStartedWithWhatOpenMpiSaid) {
  NcclMpirunOutput out;
  out.exit_code = 1;
  out.lines = {Hello(0), OutcomeLine(0, "error", "x"),
               "ORTE was unable to reliably start one or more daemons.",
               "--------------------------"};
  auto reps = ParseNcclMpirun({"n1", "n2"}, out);
  EXPECT_EQ(reps[1].outcome, Outcome::kError);
  EXPECT_EQ(reps[1].step, "launch");
  EXPECT_THAT(reps[1].reason, HasSubstr("rank 1 never started; mpirun exited 1: "
                                        "ORTE was unable"));
}

TEST(ParseNcclMpirun, FailsARankThatStartedButEndedWithoutAnOutcome) {
  NcclMpirunOutput out;
  out.exit_code = 139;
  out.lines = {Hello(0),
               Hello(1),
               OutcomeLine(0, "pass", ""),
               "Segmentation fault",
               Line(7, {{"type", "hello"}}),
               "CCNCCL {not json"};
  auto reps = ParseNcclMpirun({"n1", "n2"}, out);
  EXPECT_EQ(reps[0].outcome, Outcome::kPass);
  EXPECT_EQ(reps[1].outcome, Outcome::kFail);
  EXPECT_THAT(reps[1].reason, HasSubstr("mpirun exited 139"));
  EXPECT_THAT(reps[1].reason, HasSubstr("Segmentation fault"));
}

}  // namespace
}  // namespace cc
