#include "reports/stage_lines.h"

#include <gtest/gtest.h>

namespace cc {
namespace {

NodeResult R(std::string node, std::string stage, Outcome o, std::string message) {
  NodeResult r;
  r.node = std::move(node);
  r.stage = std::move(stage);
  r.outcome = o;
  r.message = std::move(message);
  return r;
}

TEST(StageLines, EveryStageSaysWhatItDidOrWhyNot) {
  RunData d;
  d.run.meta = {{"stages", {"facts", "nccl", "mpi"}}};
  d.node_results = {R("local1", "facts", Outcome::kPass, "kernel 6.1"),
                    R("local2", "facts", Outcome::kPass, "kernel 6.1"),
                    R("local1", "nccl", Outcome::kSkip, "no GPU here"),
                    R("local2", "nccl", Outcome::kSkip, "no GPU here"),
                    R("*", "nccl", Outcome::kSkip, "no node has a usable GPU")};
  EXPECT_EQ(RenderStageLines(d),
            "on this machine, stage by stage\n"
            "  facts    2 pass\n"
            "  nccl     3 skip\n"
            "      local[1-2]: no GPU here\n"
            "      *: no node has a usable GPU\n"
            "  mpi      stored nothing\n");
}

TEST(StageLines, PairChecksAreNamedWithTheirCounts) {
  RunData d;
  d.run.meta = {{"stages", {"ports"}}};
  for (const char* check : {"tcp/29500", "tcp/29500", "tcp/ephemeral"}) {
    PairResult p;
    p.stage = "ports";
    p.src = "a";
    p.dst = "b";
    p.check = check;
    p.outcome = Outcome::kPass;
    d.pair_results.push_back(p);
  }
  EXPECT_EQ(RenderStageLines(d),
            "on this machine, stage by stage\n"
            "  ports    3 pass\n"
            "      between the nodes: tcp/29500 2 pass; tcp/ephemeral 1 pass\n");
}

TEST(StageLines, AtMostThreeMessagesPerStage) {
  RunData d;
  d.run.meta = {{"stages", {"ports"}}};
  for (int i = 0; i < 5; ++i) {
    d.node_results.push_back(
        R("n" + std::to_string(i), "ports", Outcome::kFail, "why " + std::to_string(i)));
  }
  std::string s = RenderStageLines(d);
  EXPECT_NE(s.find("n2: why 2"), std::string::npos) << s;
  EXPECT_EQ(s.find("n3: why 3"), std::string::npos) << s;
}

}  // namespace
}  // namespace cc
