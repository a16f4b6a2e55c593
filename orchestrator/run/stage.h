// A stage plans its work from the inventory and earlier stages' facts,
// runs it through the fleet, and judges it. Each stage is a folder
// orchestrator/stages/<name>/ and a row of the table there (stages.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/inventory/inventory.h"
#include "orchestrator/run/confirm.h"
#include "orchestrator/run/confirmed_paths.h"
#include "orchestrator/run/containment.h"
#include "orchestrator/run/fleet.h"
#include "orchestrator/run/network_choice.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/run/schedule.h"
#include "orchestrator/store/store.h"

namespace cc {

// One round of a burn-in (orchestrator/burnin/): the pairs that meet in it
// (one circle-method pairing) and whether the whole cluster's NCCL run is
// interleaved in it.
struct BurnInRound {
  int number = 0;  // 1-based
  Round pairs;
  bool whole_cluster = false;
};

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
  // What every deadline, timing and wait of a stage is judged by: the
  // fleet's clock (FleetOptions::clock), the real one in a run. A test that
  // gives the fleet a FakeClock (common/fake_clock.h) gets its stages'
  // timeouts without waiting for them.
  Clock& clock() { return fleet_.clock(); }

  void Record(NodeResult r);
  void Record(PairResult r);
  void Record(std::vector<PairResult> rs);
  // A stage's own attribution of its failures, in the kinds of
  // analysis.h; analysis takes it as it is.
  void Record(const Verdict& v);
  // A cause this stage established (verdict.h CauseScope; kNone is taken
  // as kNode when the verdict names no pairs, else kLink): recorded as a
  // verdict, and, unless the inventory turned containment off or this is a
  // burn-in round, later stages leave its scope out (containment()).
  void RecordCause(Verdict v);
  // What later stages leave out: the causes recorded so far. A copy, so
  // that a stage may hold it while others record.
  Containment containment() const;
  // TCP paths an earlier stage confirmed failing (confirmed_paths.h).
  ConfirmedPaths& confirmed_paths() { return confirmed_paths_; }
  // Whether a recorded result was `fail` or `hang` (exit code 1).
  bool AnyFailedOrHung() const;

  // Facts per node, set by the facts stage (node -> facts JSON).
  void SetFacts(const std::string& node, nlohmann::json facts);
  std::map<std::string, nlohmann::json> facts() const;

  // The network the nics stage chose for the later stages; also recorded
  // in the run's meta (NetworkChoiceMeta). nullopt until it chose one.
  void SetNetworkChoice(NetworkChoice choice);
  std::optional<NetworkChoice> network_choice() const;

  // The confirmation counts of a pair stage (confirm.h), stored in the run
  // meta as "retests.<stage>" so that the summary can say how many
  // accusations were tested again and how many turned out flaky.
  void RecordRetests(const std::string& stage, const RetestCounts& counts);

  // In a burn-in round: every result and verdict recorded is stamped with
  // its number (kept apart from the run's own judgement: store.h), a pair
  // stage tests only the round's pairs (PairRounds) and does not retest
  // (the rounds are the confirmation).
  void SetBurnInRound(std::optional<BurnInRound> round);
  const std::optional<BurnInRound>& burnin_round() const { return burnin_round_; }
  // The rounds of disjoint pairs a pair stage tests among `nodes`:
  // RoundRobinRounds(nodes) in a run; in a burn-in round, that round's
  // pairs whose both nodes are among `nodes` (empty when none are).
  std::vector<Round> PairRounds(const std::vector<std::string>& nodes) const;
  // Whether a pair stage tests a and b (either way round) now: always in a
  // run; in a burn-in round, only when they meet in it.
  bool MeetsThisRound(const std::string& a, const std::string& b) const;
  // Takes the facts and network choice an earlier context (the burn-in's
  // round 0) learnt, without storing them again.
  void InheritFrom(const StageContext& earlier);

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
  std::optional<NetworkChoice> network_choice_;
  Containment containment_;
  ConfirmedPaths confirmed_paths_;
  std::vector<std::string> store_errors_;
  std::optional<BurnInRound> burnin_round_;  // set before stages run, read-only then
};

class Stage {
 public:
  virtual ~Stage() = default;
  virtual std::string name() const = 0;
  // Runs and records results. An error Status means the stage itself
  // could not run (it is recorded as `error` by the runner); failed checks
  // are recorded results, not errors.
  virtual Status Run(StageContext& ctx) = 0;
  // Runs once every later stage has run (or the run was interrupted),
  // for a stage that compares what it read before them with what it reads
  // after (the health stage's IB counters). Same error rule as Run.
  virtual Status AfterStages(StageContext& ctx) {
    (void)ctx;
    return Status::Ok();
  }
  // True for a stage that overrides AfterStages: the runner keeps it (and
  // what it holds) until then. Every other stage is destroyed the moment
  // its Run returns, so that its probes and answers (tens of MB at 256
  // nodes) are not still held while the next stage runs.
  virtual bool HasAfterStages() const { return false; }
};

}  // namespace cc
