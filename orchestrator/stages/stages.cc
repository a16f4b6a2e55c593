// The table of stages, in run order: one row per stage, each defined in
// its own folder. Also the inventory's list of stages and their settings
// (inventory/stage_settings.h), which come from these rows.
#include "orchestrator/stages/stages.h"

#include <map>
#include <set>

#include "orchestrator/stages/facts/facts_spec.h"
#include "orchestrator/stages/health/health_spec.h"
#include "orchestrator/stages/mpi/mpi_spec.h"
#include "orchestrator/stages/nccl/nccl_spec.h"
#include "orchestrator/stages/nics/nics_spec.h"
#include "orchestrator/stages/parity/parity_spec.h"
#include "orchestrator/stages/ports/ports_spec.h"
#include "orchestrator/stages/sleep/sleep_spec.h"

namespace cc {

const std::vector<const StageSpec*>& StageSpecs() {
  static const std::vector<const StageSpec*> kStages = {
      &FactsSpec(),
      &ParitySpec(),
      &HealthSpec(),
      &NicsSpec(),
      &PortsSpec(),
      &NcclSpec(),
      &MpiSpec(),
      // Diagnostics, not in the default list.
      &SleepSpec(),
  };
  return kStages;
}

const StageSpec* FindStageSpec(const std::string& name) {
  for (const StageSpec* s : StageSpecs()) {
    if (name == s->name) return s;
  }
  return nullptr;
}

std::vector<std::string> DefaultStageNames() {
  std::vector<std::string> out;
  for (const StageSpec* s : StageSpecs()) {
    if (s->in_default) out.push_back(s->name);
  }
  return out;
}

bool PairsDirected(const std::string& stage) {
  const StageSpec* s = FindStageSpec(stage);
  return s && s->pairs_directed;
}

std::string MatrixCheck(const PairResult& r) {
  const StageSpec* s = FindStageSpec(r.stage);
  if (s && s->matrix_check) {
    std::string check = s->matrix_check(r);
    if (!check.empty()) return check;
  }
  return r.check;
}

std::vector<std::pair<std::string, std::string>> PairChecks(const RunData& d) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::pair<std::string, std::string>> seen;
  auto add = [&](const std::string& stage, const std::string& check) {
    if (seen.insert({stage, check}).second) out.push_back({stage, check});
  };
  for (const auto& [stage, check] : d.pair_check_order) add(stage, check);
  for (const auto& r : d.pair_results) add(r.stage, MatrixCheck(r));
  for (const auto& g : d.routine_pairs.groups()) add(g.stage, g.matrix_check);
  return out;
}

PairsByCheck::PairsByCheck(const RunData& d) : checks(PairChecks(d)), full(checks.size()) {
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (size_t i = 0; i < checks.size(); ++i) index[checks[i]] = i;
  for (const auto& r : d.pair_results) full[index.at({r.stage, MatrixCheck(r)})].push_back(&r);
  for (const auto& g : d.routine_pairs.groups()) {
    check_of_group.push_back(index.at({g.stage, g.matrix_check}));
  }
}

nlohmann::json StageSpec::DocumentedDefaults() const {
  nlohmann::json out = nlohmann::json::object();
  for (const StageSettingKey& k : settings) {
    if (*k.default_value) out[k.key] = nlohmann::json::parse(k.default_value);
  }
  return out;
}

// The declarations are in inventory/stage_settings.h: the inventory
// checks names and settings against the table without depending on it.
const std::vector<std::string>& KnownStages() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const StageSpec* s : StageSpecs()) names.push_back(s->name);
    return names;
  }();
  return kNames;
}

const std::vector<StageSettingKey>& StageSettingKeys() {
  static const std::vector<StageSettingKey> kKeys = [] {
    std::vector<StageSettingKey> keys;
    for (const StageSpec* s : StageSpecs()) {
      keys.insert(keys.end(), s->settings.begin(), s->settings.end());
    }
    return keys;
  }();
  return kKeys;
}

}  // namespace cc
