#include "orchestrator/stages/stages.h"

#include <gtest/gtest.h>

#include <set>

namespace cc {
namespace {

TEST(Stages, EveryRowIsCompleteAndNamedOnce) {
  std::set<std::string> names;
  for (const StageSpec* s : StageSpecs()) {
    EXPECT_TRUE(names.insert(s->name).second) << s->name;
    EXPECT_NE(std::string(s->summary), "") << s->name;
    EXPECT_NE(s->make, nullptr) << s->name;
    EXPECT_NE(s->estimate, nullptr) << s->name;
    EXPECT_EQ(FindStageSpec(s->name), s);
  }
  EXPECT_EQ(FindStageSpec("connect"), nullptr);
}

TEST(Stages, AStagesSettingsAreItsOwnAndTheInventoryFindsThem) {
  size_t rows = 0;
  for (const StageSpec* s : StageSpecs()) {
    for (const StageSettingKey& k : s->settings) {
      EXPECT_EQ(std::string(k.stage), s->name) << k.key;
      const StageSettingKey* found = FindStageSettingKey(s->name, k.key);
      ASSERT_NE(found, nullptr) << s->name << "." << k.key;
      EXPECT_EQ(std::string(found->help), k.help);
      ++rows;
    }
  }
  EXPECT_EQ(StageSettingKeys().size(), rows);
}

TEST(Stages, EveryDocumentedDefaultIsAValidSetting) {
  for (const StageSettingKey& k : StageSettingKeys()) {
    std::string text = k.default_value;
    if (text.empty()) continue;  // worked out per run
    nlohmann::json value = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(value.is_discarded()) << k.stage << "." << k.key << " = " << text;
    EXPECT_EQ(CheckStageSetting(k, value), "") << k.stage << "." << k.key << " = " << text;
  }
}

TEST(Stages, DocumentedDefaultsLeaveOutWhatIsWorkedOutPerRun) {
  const StageSpec* nccl = FindStageSpec("nccl");
  ASSERT_NE(nccl, nullptr);
  nlohmann::json d = nccl->DocumentedDefaults();
  EXPECT_EQ(d["iters"], 20);
  EXPECT_FALSE(d.contains("gpus_per_node"));
}

TEST(Stages, TheInventoryKnowsTheTablesStagesInRunOrder) {
  std::vector<std::string> names;
  for (const StageSpec* s : StageSpecs()) names.push_back(s->name);
  EXPECT_EQ(KnownStages(), names);
  std::vector<std::string> defaults = DefaultStageNames();
  EXPECT_EQ(defaults, (std::vector<std::string>{"facts", "parity", "health", "nics", "ports",
                                                "nccl", "mpi"}));
}

TEST(Stages, OnlyThePortsChecksAreDirectedByTheirStage) {
  for (const StageSpec* s : StageSpecs()) {
    EXPECT_EQ(PairsDirected(s->name), std::string(s->name) == "ports") << s->name;
  }
  EXPECT_FALSE(PairsDirected("connect"));
}

TEST(Stages, EphemeralPortsShareOneMatrix) {
  PairResult r;
  r.stage = "ports";
  r.check = "tcp/61234";
  r.evidence = {{"kind", "ephemeral"}};
  EXPECT_EQ(MatrixCheck(r), "tcp/ephemeral");
  r.evidence = {{"kind", "listed"}};
  EXPECT_EQ(MatrixCheck(r), "tcp/61234");
  // Another stage's evidence means nothing to the ports stage's rule.
  r.stage = "nics";
  r.evidence = {{"kind", "ephemeral"}};
  EXPECT_EQ(MatrixCheck(r), "tcp/61234");
}

}  // namespace
}  // namespace cc
