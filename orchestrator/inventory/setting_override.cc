#include "orchestrator/inventory/setting_override.h"

#include "orchestrator/inventory/stage_settings.h"

namespace cc {

Status ApplySettingOverride(Inventory& inventory, const std::string& text) {
  size_t eq = text.find('=');
  size_t dot = text.find('.');
  if (eq == std::string::npos || dot == std::string::npos || dot > eq) {
    return Status::BadArgument("--set " + text + ": expected STAGE.KEY=VALUE (health.since=24h)");
  }
  std::string stage = text.substr(0, dot), key = text.substr(dot + 1, eq - dot - 1);
  std::string raw = text.substr(eq + 1);
  if (!IsKnownStage(stage))
    return Status::BadArgument("--set " + text + ": no stage '" + stage + "'");
  const StageSettingKey* row = FindStageSettingKey(stage, key);
  if (!row) {
    std::string known;
    for (const auto& k : StageSettingKeyNames(stage)) known += (known.empty() ? "" : ", ") + k;
    return Status::BadArgument("--set " + text + ": stage " + stage + " has no setting '" + key +
                               "' (it has " + known + ")");
  }
  nlohmann::json value = nlohmann::json::parse(raw, nullptr, false);
  if (value.is_discarded() || (row->type == StageSettingKey::kString && !value.is_string())) {
    value = raw;
  }
  std::string wrong = CheckStageSetting(*row, value);
  if (!wrong.empty()) return Status::BadArgument("--set " + text + ": " + wrong);
  if (row->type == StageSettingKey::kFloat && value.is_number_integer()) {
    value = value.get<double>();
  }
  nlohmann::json& table = inventory.stage_settings[stage];
  if (!table.is_object()) table = nlohmann::json::object();
  table[key] = value;
  return Status::Ok();
}

}  // namespace cc
