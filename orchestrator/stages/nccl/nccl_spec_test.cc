#include "orchestrator/stages/nccl/nccl_spec.h"

#include <gtest/gtest.h>

#include "orchestrator/stages/nccl/nccl_plan.h"

namespace cc {
namespace {

TEST(NcclSpec, TheDocumentedDefaultsAreTheStagesOwn) {
  Result<NcclSettings> documented = ReadNcclSettings(NcclSpec().DocumentedDefaults());
  Result<NcclSettings> unset = ReadNcclSettings(nlohmann::json::object());
  ASSERT_TRUE(documented.ok()) << documented.status().ToString();
  ASSERT_TRUE(unset.ok());
  EXPECT_EQ(documented->sizes, unset->sizes);
  EXPECT_EQ(documented->iters, unset->iters);
  EXPECT_EQ(documented->warmup, unset->warmup);
  EXPECT_EQ(documented->check_iters, unset->check_iters);
  EXPECT_EQ(documented->timeout_s, unset->timeout_s);
  EXPECT_EQ(documented->policy.require_net, unset->policy.require_net);
  EXPECT_EQ(documented->policy.require_gdrdma, unset->policy.require_gdrdma);
  EXPECT_EQ(documented->env, unset->env);
  EXPECT_EQ(documented->min_busbw_gbps, unset->min_busbw_gbps);
  EXPECT_EQ(documented->outlier_fraction, unset->outlier_fraction);
  EXPECT_EQ(documented->phases, unset->phases);
  EXPECT_EQ(documented->launcher, unset->launcher);
  EXPECT_EQ(documented->dtypes, unset->dtypes);
}

TEST(NcclSpec, TheSummarySaysBusbwPerDtypeWhenSeveralRan) {
  nlohmann::json meta = {
      {"tests", 3},
      {"busbw_by_dtype",
       {{{"dtype", "float"}, {"pairs_median_gbps", 180.5}, {"cluster_gbps", 170.0}},
        {{"dtype", "bf16"}, {"cluster_gbps", 175.25}},
        {{"dtype", "half"}}}}};
  StageTerminalNotes s = NcclSpec().summarize(meta);
  ASSERT_EQ(s.lines.size(), 1u);
  EXPECT_EQ(s.lines[0],
            "nccl busbw by dtype: float 180.50 GB/s (pairs), bf16 175.25 GB/s (cluster), half -");
}

TEST(NcclSpec, TheSummarySaysWhatNamingTheBadNodeCost) {
  nlohmann::json meta = {
      {"tests", 40},
      {"isolation",
       {{"runs_after_cluster", 12}, {"pair_probes", 8}, {"group_tests", 4}, {"group_rounds", 2}}}};
  StageTerminalNotes s = NcclSpec().summarize(meta);
  ASSERT_EQ(s.lines.size(), 1u);
  EXPECT_EQ(s.lines[0],
            "nccl isolation: 12 NCCL runs (8 pair probes, 4 group tests in 2 rounds) of 40 NCCL "
            "tests in all");
  EXPECT_EQ(s.section, "");
  meta["isolation"]["runs_after_cluster"] = 0;
  EXPECT_TRUE(NcclSpec().summarize(meta).lines.empty());
  EXPECT_TRUE(NcclSpec().summarize(nlohmann::json()).lines.empty());
}

}  // namespace
}  // namespace cc
