#include "orchestrator/inventory/stage_settings.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace cc {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

const StageSettingKey& Key(const char* stage, const char* key) {
  const StageSettingKey* k = FindStageSettingKey(stage, key);
  EXPECT_NE(k, nullptr) << stage << "." << key;
  static const StageSettingKey kNone{"", "", StageSettingKey::kString, 0, ""};
  return k ? *k : kNone;
}

std::string Check(const char* stage, const char* key, const char* json) {
  return CheckStageSetting(Key(stage, key), Json::parse(json));
}

TEST(StageSettings, EveryRowBelongsToAKnownStageAndIsUnique) {
  std::set<std::pair<std::string, std::string>> seen;
  for (const StageSettingKey& k : StageSettingKeys()) {
    EXPECT_TRUE(IsKnownStage(k.stage)) << k.stage;
    EXPECT_TRUE(seen.insert({k.stage, k.key}).second) << k.stage << "." << k.key;
    EXPECT_NE(std::string(k.help), "") << k.key;
    EXPECT_NE(DescribeStageSettingType(k), "?");
  }
}

TEST(StageSettings, KnownStagesStartWithTheChecksInRunOrder) {
  const std::vector<std::string>& known = KnownStages();
  ASSERT_GE(known.size(), 7u);
  EXPECT_EQ(
      std::vector<std::string>(known.begin(), known.begin() + 7),
      (std::vector<std::string>{"facts", "parity", "health", "nics", "ports", "nccl", "mpi"}));
  EXPECT_FALSE(IsKnownStage("nccl2"));
}

TEST(StageSettings, UnknownKeyIsNotFound) {
  EXPECT_EQ(FindStageSettingKey("nccl", "iter"), nullptr);
  EXPECT_EQ(FindStageSettingKey("facts", "iters"), nullptr);
  EXPECT_THAT(
      StageSettingKeyNames("mpi"),
      ::testing::ElementsAre("mpirun", "probe", "timeout_s", "pair_timeout_s", "message_size",
                             "iters", "btl_tcp_if_include", "oob_tcp_if_include", "extra_args"));
}

TEST(StageSettings, IntegersMustBeIntegersAboveTheMinimum) {
  EXPECT_EQ(Check("nccl", "iters", "20"), "");
  EXPECT_EQ(Check("nccl", "iters", "0"), "expected an integer >= 1, got 0");
  EXPECT_EQ(Check("nccl", "iters", "2.5"), "expected an integer >= 1, got a float");
  EXPECT_EQ(Check("nccl", "warmup", "0"), "");
}

TEST(StageSettings, FloatsAcceptIntegersButNotZeroTimeouts) {
  EXPECT_EQ(Check("facts", "timeout_s", "30"), "");
  EXPECT_EQ(Check("facts", "timeout_s", "0.5"), "");
  EXPECT_EQ(Check("facts", "timeout_s", "0"), "expected a number >= 0.001, got 0");
  EXPECT_EQ(Check("facts", "timeout_s", "\"30\""), "expected a number >= 0.001, got a string");
}

TEST(StageSettings, BoolsStringsAndStringArrays) {
  EXPECT_EQ(Check("nics", "mtu_probe", "true"), "");
  EXPECT_EQ(Check("nics", "mtu_probe", "1"), "expected true or false, got an integer");
  EXPECT_EQ(Check("mpi", "mpirun", "\"/usr/bin/mpirun\""), "");
  EXPECT_EQ(Check("mpi", "extra_args", R"(["--mca", "x"])"), "");
  EXPECT_EQ(Check("parity", "ignore", R"(["kernel", 3])"),
            "[1]: expected a string, got an integer");
}

TEST(StageSettings, PortListsTakePortsAndRanges) {
  EXPECT_EQ(Check("ports", "ports", R"([22, 29500, "60000-60100"])"), "");
  EXPECT_EQ(Check("ports", "ports", "[0]"), "[0]: port 0 is outside 1..65535");
  EXPECT_THAT(Check("ports", "ports", R"([22, "70000"])"),
              HasSubstr("[1]: bad port range '70000'"));
  EXPECT_THAT(Check("ports", "ports", R"(["9-3"])"), HasSubstr("low before high"));
  EXPECT_THAT(Check("ports", "ports", "22"), HasSubstr("got an integer"));
}

TEST(StageSettings, SizesTakeARangeOrAList) {
  EXPECT_EQ(Check("nccl", "sizes", R"("8-256M")"), "");
  EXPECT_EQ(Check("nccl", "sizes", R"(["1K", 1048576, "1G"])"), "");
  EXPECT_THAT(Check("nccl", "sizes", R"("256M-8")"), HasSubstr("reversed"));
  EXPECT_THAT(Check("nccl", "sizes", R"("8-256X")"), HasSubstr("bad size '256X'"));
  EXPECT_THAT(Check("nccl", "sizes", R"(["8-16"])"), HasSubstr("[0]: bad size"));
  EXPECT_THAT(Check("nccl", "sizes", "[true]"), HasSubstr("[0]: expected a size"));
}

TEST(StageSettings, StringTablesTakeOnlyStrings) {
  EXPECT_EQ(Check("nccl", "env", R"({"NCCL_DEBUG": "INFO"})"), "");
  EXPECT_EQ(Check("nccl", "env", R"({"NCCL_DEBUG": 1})"),
            "NCCL_DEBUG: expected a string, got an integer");
  EXPECT_THAT(Check("nccl", "env", R"(["x"])"), HasSubstr("got an array"));
}

TEST(ParsePortRange, ReadsSinglePortsAndRanges) {
  EXPECT_EQ(*ParsePortRange("29500"), std::make_pair(29500, 29500));
  EXPECT_EQ(*ParsePortRange("1-65535"), std::make_pair(1, 65535));
  EXPECT_FALSE(ParsePortRange("").ok());
  EXPECT_FALSE(ParsePortRange("-5").ok());
  EXPECT_FALSE(ParsePortRange("5-").ok());
  EXPECT_FALSE(ParsePortRange("0").ok());
  EXPECT_FALSE(ParsePortRange("99999999999999999999999").ok());
  EXPECT_FALSE(ParsePortRange("1-2-3").ok());
}

TEST(ParseByteSize, ReadsSuffixesAsPowersOf1024) {
  EXPECT_EQ(*ParseByteSize("8"), 8u);
  EXPECT_EQ(*ParseByteSize("64K"), 65536u);
  EXPECT_EQ(*ParseByteSize("256M"), 256u << 20);
  EXPECT_EQ(*ParseByteSize("1g"), 1u << 30);
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("M").ok());
  EXPECT_FALSE(ParseByteSize("-1").ok());
  EXPECT_FALSE(ParseByteSize("99999999999G").ok());
  EXPECT_EQ(*ParseByteSizeRange("8-256M"), std::make_pair(uint64_t{8}, uint64_t{256} << 20));
  EXPECT_EQ(*ParseByteSizeRange("1M"), std::make_pair(uint64_t{1} << 20, uint64_t{1} << 20));
}

}  // namespace
}  // namespace cc
