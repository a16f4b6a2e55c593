// The results store: SQLite in WAL mode. Every result is written the moment
// it is known (one autocommit statement each), so a crash or Ctrl-C keeps
// everything measured so far. Schema versioned with PRAGMA user_version and
// ordered migrations.
//
// Threading: one Store may be used from several threads; calls are
// serialized inside.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "common/status.h"
#include "orchestrator/store/verdict.h"

struct sqlite3;

namespace cc {

struct RunRecord {
  int64_t id = 0;
  std::string started_at;   // ISO 8601 UTC
  std::string finished_at;  // "" while running or after a crash
  std::string status;       // "running" | "done" | "interrupted" | "aborted"
  int exit_code = -1;
  std::string inventory_path;
  std::string inventory_sha256;
  std::string inventory_name;
  std::string argv;                                // as typed
  std::string version;                             // clustercheck version
  nlohmann::json meta = nlohmann::json::object();  // stages, selections, ...
};

struct NodeRecord {
  int64_t run_id = 0;
  std::string node;
  std::string address;
  bool reachable = false;
  std::string error;  // why unreachable (kind: message)
  nlohmann::json facts = nlohmann::json::object();
};

struct NodeResult {
  int64_t run_id = 0;
  std::string node;
  std::string stage;  // a stage's name (orchestrator/stages/stages.h), or "connect"
  std::string check;  // "driver", "reachable", "allreduce", ...
  Outcome outcome = Outcome::kError;
  std::string value;     // what the node has
  std::string expected;  // what it should have ("" when none)
  std::string message;   // for people
  nlohmann::json evidence = nlohmann::json::object();
  std::string at;  // ISO 8601 UTC; filled by the store if empty
  int round = 0;   // burn-in round (1..); 0 in a plain run
};

// A node result of `stage` with the fields the stages fill most often.
NodeResult NodeCheck(const std::string& stage, const std::string& node, const std::string& check,
                     Outcome outcome, const std::string& message,
                     nlohmann::json evidence = nlohmann::json::object(),
                     const std::string& value = "");

struct PairResult {
  int64_t run_id = 0;
  std::string stage;  // the name of a stage that tests node pairs
  std::string src;    // sender / first node
  std::string dst;    // receiver / second node
  std::string check;  // "tcp/29500", "allreduce", "pingpong", ...
  Outcome outcome = Outcome::kError;
  std::string state;            // stage-specific: "open", "filtered", ...
  std::optional<double> value;  // e.g. busbw GB/s, latency us
  std::string unit;
  std::string message;
  nlohmann::json evidence = nlohmann::json::object();
  std::string at;
  int round = 0;  // burn-in round (1..); 0 in a plain run
};

class Store {
 public:
  // Opens (creating parent directories and the file) and migrates to the
  // newest schema. kIo naming the path when that fails.
  static Result<std::unique_ptr<Store>> Open(const std::string& path);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // The newest schema this code knows; a database that is newer is refused.
  static constexpr int kSchemaVersion = 5;
  // PRAGMA user_version of the open database; -1 when it cannot be read.
  int schema_version();

  // Inserts a run and returns its id. An empty started_at becomes now, an
  // empty status "running"; `run.id` is ignored.
  Result<int64_t> BeginRun(const RunRecord& run);
  // Sets finished_at to now. kNotFound when the run does not exist.
  Status FinishRun(int64_t run_id, const std::string& status, int exit_code);
  // meta[key] = value, other keys kept. kNotFound when the run does not
  // exist.
  Status SetRunMeta(int64_t run_id, const std::string& key, const nlohmann::json& value);

  Status PutNode(const NodeRecord& node);  // insert or replace
  Status AddNodeResult(const NodeResult& r);
  Status AddPairResult(const PairResult& r);
  // Many at once in one transaction (e.g. 40k port probes).
  Status AddPairResults(const std::vector<PairResult>& rs);
  // A stage's own verdict; `at` (ISO 8601 UTC) is now when empty. One
  // made in a burn-in round is kept apart (round >= 1): a burn-in judges
  // by rate over the rounds, never by one round's accusation.
  Status AddVerdict(int64_t run_id, const Verdict& v, const std::string& at = "", int round = 0);

  // kNotFound when the run does not exist.
  Result<RunRecord> GetRun(int64_t run_id);
  Result<int64_t> LatestRunId();  // kNotFound when there are none
  // Newest first.
  Result<std::vector<RunRecord>> ListRuns(int limit = 50);
  // In the order first put (updates keep a node's place).
  Result<std::vector<NodeRecord>> GetNodes(int64_t run_id);
  // In the order written; round 0 only (a plain run's results, a
  // burn-in's facts, parity and health): what the analysis judges.
  Result<std::vector<NodeResult>> GetNodeResults(int64_t run_id);
  Result<std::vector<PairResult>> GetPairResults(int64_t run_id);
  // The same, one at a time, without holding them all (a run of 256 nodes
  // has a million): stops at the first row that cannot be read. `each`
  // runs with the store's lock held; it must not call the store.
  Status ForEachPairResult(int64_t run_id, const std::function<void(PairResult&&)>& each);
  // How many results ForEachPairResult gives, and how many of them have a
  // value: for a reader to make room once instead of growing by doubling
  // (a vector that doubles holds 3x its need while it moves).
  struct PairResultCount {
    int64_t results = 0;
    int64_t with_value = 0;
  };
  Result<PairResultCount> CountPairResults(int64_t run_id);
  Result<std::vector<Verdict>> GetVerdicts(int64_t run_id);
  // A burn-in's rounds (round >= 1), in the order written.
  Result<std::vector<NodeResult>> GetRoundNodeResults(int64_t run_id);
  Result<std::vector<PairResult>> GetRoundPairResults(int64_t run_id);
  // One round's pair results (round >= 1), in the order written.
  Result<std::vector<PairResult>> GetPairResultsOfRound(int64_t run_id, int round);
  // Deletes every result and verdict of rounds >= first_round (a round
  // that did not end when a burn-in was stopped or its controller died),
  // and the burn-in's own verdicts (evidence "burnin"), which are judged
  // anew when it resumes.
  Status DeleteRoundsFrom(int64_t run_id, int first_round);
  // A run continued (`burnin --resume`): its round-0 results and verdicts
  // go, since the stages that made them run again; it is running again
  // (status "running", no finish time). Its rounds stay.
  Status ReopenRun(int64_t run_id);

  const std::string& path() const { return path_; }

 private:
  Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Exec(const std::string& sql);
  Status Migrate();
  // kIo: "<path>: <what>: <sqlite's message>".
  Status SqlError(const std::string& what);
  // Inserts without a transaction of its own. REQUIRES: mu_ held.
  Status InsertPairResults(const std::vector<PairResult>& rs);
  sqlite3* db_;
  std::string path_;
  std::recursive_mutex mu_;
};

// ~/.local/state/clustercheck/clustercheck.db, or $XDG_STATE_HOME/...
std::string DefaultStorePath();
// "2026-12-02T10:26:45Z"
std::string NowIso8601();

}  // namespace cc
