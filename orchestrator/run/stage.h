// A stage plans its work from the inventory and earlier stages' facts,
// runs it through the fleet, and judges it. Stages are rows in the table
// in stages.cc, one file each.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "orchestrator/inventory/inventory.h"
#include "orchestrator/run/confirm.h"
#include "orchestrator/run/fleet.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/store/store.h"

namespace cc {

// What stages share during one run. Record*() stores a result at once
// (crash-safe); the context keeps only whether anything failed or hung
// (the results themselves live in the store: a 128-node run has ~160,000
// port probes, and three copies of them in memory were most of the
// controller's RSS). Thread-safe.
class StageContext {
 public:
  StageContext(const Inventory& inventory, Store& store, int64_t run_id, Fleet& fleet,
               Progress& progress)
      : inventory_(inventory), store_(store), run_id_(run_id), fleet_(fleet), progress_(progress) {}

  const Inventory& inventory() const { return inventory_; }
  Store& store() { return store_; }
  int64_t run_id() const { return run_id_; }
  Fleet& fleet() { return fleet_; }
  Progress& progress() { return progress_; }

  void Record(NodeResult r);
  void Record(PairResult r);
  void Record(std::vector<PairResult> rs);
  // Whether a recorded result was `fail` or `hang` (exit code 1).
  bool AnyFailedOrHung() const;

  // Facts per node, set by the facts stage (node -> facts JSON).
  void SetFacts(const std::string& node, nlohmann::json facts);
  std::map<std::string, nlohmann::json> facts() const;

  // Cross-stage choices (e.g. the NIC stage's NCCL_SOCKET_IFNAME, each
  // node's address on the selected network). Also stored in the run's meta.
  void Select(const std::string& key, nlohmann::json value);
  nlohmann::json Selection(const std::string& key) const;

  // The confirmation counts of a pair stage (confirm.h), stored in the run
  // meta as "retests.<stage>" so that the summary can say how many
  // accusations were tested again and how many turned out flaky.
  void RecordRetests(const std::string& stage, const RetestCounts& counts);

  // Store errors are not fatal for the run, but must not vanish.
  std::vector<std::string> store_errors() const;

 private:
  const Inventory& inventory_;
  Store& store_;
  int64_t run_id_;
  Fleet& fleet_;
  Progress& progress_;
  mutable std::mutex mu_;
  bool any_failed_or_hung_ = false;
  std::map<std::string, nlohmann::json> facts_;
  nlohmann::json selections_ = nlohmann::json::object();
  std::vector<std::string> store_errors_;
};

class Stage {
 public:
  virtual ~Stage() = default;
  virtual std::string name() const = 0;
  // Runs and records results. An error Status means the stage itself
  // could not run (it is recorded as `error` by the runner); failed checks
  // are recorded results, not errors.
  virtual Status Run(StageContext& ctx) = 0;
};

struct StageEntry {
  const char* name;
  const char* summary;
  std::function<std::unique_ptr<Stage>()> make;
  bool in_default = true;  // part of a plain `clustercheck run`
};

// In run order.
const std::vector<StageEntry>& Stages();
const StageEntry* FindStage(const std::string& name);
// The stages `run` uses when neither --stages nor [stages].run says.
std::vector<std::string> DefaultStageNames();

}  // namespace cc
