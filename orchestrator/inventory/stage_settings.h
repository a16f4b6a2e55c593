// The stages an inventory may name and the settings each accepts in its
// [stages.<name>] table. A stage that grows a setting adds a row to its
// StageSpec (orchestrator/stages/<name>/<name>_spec.cc); the inventory
// parser checks every key and value against the rows, so a typo in an
// inventory is an error with a line number, not a silently ignored setting.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace cc {

struct StageSettingKey {
  enum Type {
    kInt,          // integer >= min
    kFloat,        // number (integer or float) >= min; stored as a double
    kString,       // any string
    kBool,         // true / false
    kStringArray,  // ["a", "b"]
    kPortList,     // [22, 29500, "60000-60100"]: ports or "lo-hi" ranges
    kSizeList,     // "8-256M" or ["1K", 1048576]: byte sizes (see below)
    kStringTable,  // { NCCL_DEBUG = "INFO" }: string values only
  };
  const char* stage;
  const char* key;
  Type type;
  // Lowest allowed value for kInt / kFloat; ignored otherwise. Timeouts
  // have a small positive minimum so that 0 ("no deadline") cannot sneak
  // in: every blocking step has a deadline.
  double min;
  const char* help;
  // What an unset key means, as JSON ("29500", "[\"1M\"]", "true"); ""
  // where the stage works it out per run ("every GPU the facts list").
  const char* default_value = "";
};

// Known stages in their run order, then diagnostic ones that run only when
// asked for. Defined by the stage table (orchestrator/stages/stages.cc).
const std::vector<std::string>& KnownStages();
bool IsKnownStage(std::string_view stage);

// Every known (stage, key), grouped by stage; from the stage table.
const std::vector<StageSettingKey>& StageSettingKeys();
// nullptr when the stage has no such key.
const StageSettingKey* FindStageSettingKey(std::string_view stage, std::string_view key);
// The key names of one stage (for "did you mean" hints).
std::vector<std::string> StageSettingKeyNames(std::string_view stage);
// "an integer >= 1", "an array of strings", ... for messages.
std::string DescribeStageSettingType(const StageSettingKey& key);

// Checks `value` against the key's type and bounds. Returns "" when it
// fits, otherwise what is wrong ("expected an integer >= 1, got -3").
// For kFloat an integer is accepted; the caller stores it as a double.
std::string CheckStageSetting(const StageSettingKey& key, const nlohmann::json& value);

// "29500" or "60000-60100" -> {lo, hi}, both in 1..65535, lo <= hi.
Result<std::pair<int, int>> ParsePortRange(std::string_view text);
// "8", "64K", "256M", "1G" (powers of 1024, as nccl-tests reads them).
Result<uint64_t> ParseByteSize(std::string_view text);
// "8-256M" -> {8, 268435456}; a single size gives {n, n}. lo <= hi.
Result<std::pair<uint64_t, uint64_t>> ParseByteSizeRange(std::string_view text);

}  // namespace cc
