// The pure half of the `nccl` stage (nccl_stage.cc): its settings, the
// environment every rank gets, how many GPUs a node brings, and the
// judgement of one test from what each node's agent reported. No I/O.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "common/status.h"
#include "orchestrator/stages/nccl/nccl_log.h"
#include "orchestrator/stages/nccl/nccl_policy.h"

namespace cc {

// [stages.nccl] settings (rows in nccl_spec.cc), with their defaults.
struct NcclSettings {
  // Message sizes, bytes. Default 1M, 8M, 64M: enough to see bandwidth,
  // short enough that a whole round takes seconds.
  std::vector<uint64_t> sizes = {uint64_t{1} << 20, uint64_t{8} << 20, uint64_t{64} << 20};
  int iters = 20;  // timed iterations per size
  int warmup = 5;  // untimed iterations per size
  // Burn-in: untimed iterations per size after the timed ones, each
  // followed by the exact data check of its output; 0 = none.
  int check_iters = 0;
  double timeout_s = 60;                   // the agent's deadline per step (init, each size)
  TransportPolicy policy;                  // require_net, require_gdrdma
  std::optional<int> gpus_per_node;        // default: every GPU the facts list
  std::map<std::string, std::string> env;  // [stages.nccl.env]
  double min_busbw_gbps = 0;               // floor; 0 = none
  double outlier_fraction = 0.8;           // of the pairs' median busbw
  // Which phases run, in this order: intra, pairs, cluster, isolate.
  std::vector<std::string> phases = {"intra", "pairs", "cluster", "isolate"};
  int isolate_max_tests = 0;  // 0: 4 * nodes + 16
  // "agent": the agents' own rendezvous (nccl_launch.h); "mpirun": one
  // mpirun per test, the id through MPI_Bcast (nccl_mpirun.h).
  std::string launcher = "agent";
  // Element types, each measured over every size in one communicator; the
  // first drives retests, the speed judgement and the isolation.
  std::vector<std::string> dtypes = {"float"};

  bool Has(const std::string& phase) const;
};

// Reads the stage's settings (already type-checked by the inventory
// parser). kBadInventory for values the types cannot catch: sizes that are
// not multiples of 4, an unknown phase, a launcher other than "agent" or
// "mpirun", dtypes empty, repeated or other than "float", "bf16", "half".
Result<NcclSettings> ReadNcclSettings(const nlohmann::json& settings);

// The longest the agents' own deadlines can let one test run: timeout_s
// for the init, each size's timed iterations and each checked iteration,
// and the finalize. The launchers' backstops are this plus their slack.
double NcclAgentDeadlinesS(const NcclSettings& s);

// The NCCL environment of one node's ranks, later entries winning:
//   1. the nics stage's choice (NetworkChoice::nccl_env: NCCL_SOCKET_IFNAME,
//      ...; a "" value is no advice and is left out),
//   2. [stages.nccl.env],
//   3. the node's own env from the inventory (defaults, group, node).
// Only NCCL_* and CUDA_* names are passed (the agent accepts no others;
// the rest of the node env reaches the agent's process anyway). An
// operator's explicit setting beats the cluster-wide recommendation.
std::map<std::string, std::string> NcclEnvFor(const std::map<std::string, std::string>& chosen,
                                              const std::map<std::string, std::string>& stage_env,
                                              const std::map<std::string, std::string>& node_env);

// GPUs the node's ranks drive: from the facts (gpu.count with status ok),
// capped by gpus_per_node. 0 with *why set when there are none to use.
int GpusToUse(const nlohmann::json& facts, std::optional<int> gpus_per_node, std::string* why);

// What one node's agent said in one test.
// Whether an agent's "size" result says its data was exact: data_ok, and
// no checked iteration (check_iters) mismatched.
bool NcclSizeExact(const nlohmann::json& size);

struct RankReport {
  std::string node;
  int nranks_here = 1;
  Outcome outcome = Outcome::kError;
  std::string reason;  // the agent's, or why the controller gave up
  std::string step;    // "init", "allreduce 1048576 bytes", "start", ...
  nlohmann::json sizes = nlohmann::json::array();  // the agent's "size" results
  std::string log;                                 // NCCL's INFO log of this process
  nlohmann::json setup;                            // the agent's "setup" (versions, paths)
};

struct TestJudgement {
  Outcome outcome = Outcome::kError;
  std::string message;
  // busbw at the largest size, the slowest rank's (GB/s); none if no size ran.
  std::optional<double> busbw;
  nlohmann::json sizes = nlohmann::json::array();  // per size, over all ranks
  NcclLogSummary log;                              // merged over the ranks
  TransportVerdict transport;
  // Nodes whose own run failed (not hung) while others hung or failed:
  // the ones that broke the communicator.
  std::vector<std::string> culprits;
  nlohmann::json evidence = nlohmann::json::object();
  std::string dtype = "float";  // of the sizes judged
  // When the test ran several dtypes: the judgements of the others, in the
  // settings' order (this one is the first's).
  std::vector<TestJudgement> other_dtypes;
};

// Judges one communicator's test. `nodes` is the number of distinct nodes
// in it (NCCL's "nNodes" must match when > 1). The run's own outcome comes
// first (the worst rank's); a passing run is then judged on its data
// check, its transport (policy) and nNodes.
TestJudgement JudgeNcclTest(const std::vector<RankReport>& ranks, int nodes,
                            const TransportPolicy& policy);

// JudgeNcclTest per dtype of `dtypes` (REQUIRES: not empty), each on the
// ranks' reports narrowed to that dtype's sizes: the first's judgement with
// the others in other_dtypes. A rank whose only fault was a data check
// another dtype failed counts as passed for a dtype whose data was exact.
// A judgement of a dtype other than float says so in evidence "dtype".
TestJudgement JudgeNcclTestByDtype(const std::vector<RankReport>& ranks, int nodes,
                                   const TransportPolicy& policy,
                                   const std::vector<std::string>& dtypes);

// A check's name for results of `dtype`: `check` for float, else
// "check.dtype" ("allreduce.bf16").
std::string NcclCheckName(const std::string& check, const std::string& dtype);

// The slow-test rule: below min_busbw_gbps (when set) is kFail, below
// outlier_fraction * median (when median > 0) is kWarn, else kPass; *why
// says which.
Outcome JudgeBusbw(double busbw, double median, const NcclSettings& s, std::string* why);

}  // namespace cc
