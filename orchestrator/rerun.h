// `clustercheck run --rerun-failed RUN`: from a stored run, what to run
// again: the nodes whose checks failed, hung or errored, and both ends of
// every such pair. Pure; thread-safe.
#pragma once

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/inventory/inventory.h"
#include "orchestrator/store/run_data.h"

namespace cc {

struct FailedPair {
  std::string stage, check, src, dst;
  Outcome outcome = Outcome::kFail;
};

struct RerunSelection {
  std::vector<std::string> nodes;  // in run order
  std::string hostlist;            // nodes folded, for --limit; "" = none
  std::vector<FailedPair> pairs;   // in stored order
  bool empty() const { return nodes.empty(); }
};

// Node results of node "*" (a whole stage that could not run) select
// every node of the run.
RerunSelection SelectFailed(const RunData& data);

// Keeps the inventory's nodes that the selection names. Selected nodes the
// inventory no longer has are returned (for a warning); kBadArgument when
// none of the selected nodes is left.
Result<std::vector<std::string>> LimitToSelection(Inventory& inventory,
                                                  const RerunSelection& selection);

// Reads run `run_id` from the database at `db_path` and selects what
// failed. kNotFound when the run does not exist; kIo for the database.
Result<RerunSelection> LoadRerunSelection(const std::string& db_path, int64_t run_id);

// `run --rerun-failed RUN`: limits `inventory` to what failed in run
// `run_id` of the database at `db_path` and sets `meta` to {"rerun_of",
// "rerun_pairs"} for the new run's record. Returns -1 to go on; else the
// exit code to leave with: 0 when nothing failed (said on `out`), 2 when
// the run is missing or none of its failed nodes is in the inventory (said
// on `err`).
int ApplyRerunFailed(const std::string& db_path, int64_t run_id, Inventory& inventory,
                     nlohmann::json& meta, std::FILE* out, std::FILE* err);

}  // namespace cc
