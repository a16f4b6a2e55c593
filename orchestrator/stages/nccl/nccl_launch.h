// Runs NCCL tests through the fleet: one communicator per group of nodes,
// every group of a batch at once (their node sets are disjoint).
//
// NCCL reads its environment once per process, so every rank of every test
// gets a FRESH agent process (Fleet::StartAgent) whose stdin stays open
// until the request's `end`. Rendezvous without MPI: the first node's agent
// creates the ncclUniqueId and sends it as result "nccl_id"; the controller
// hands it to the other nodes' requests.
//
// Deadlines: the agent has its own per step (init, each size; it aborts the
// communicator and reports `hang`); the controller adds a backstop for the
// whole test, after which it sends {"cmd":"abort"}, waits briefly and kills.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "orchestrator/run/stage.h"
#include "orchestrator/stages/nccl/nccl_plan.h"

namespace cc {

// One node as a member of NCCL tests.
struct NcclMember {
  NodeState* state = nullptr;
  std::string name;
  int gpus = 1;                            // ranks it drives: devices 0..gpus-1
  std::vector<std::string> library_paths;  // inventory's, then facts' libnccl
  std::map<std::string, std::string> env;  // NcclEnvFor(...)
};

// The args of the agent's `nccl` request for member `m` of a communicator
// of `nranks` ranks whose first rank is `rank_base`: the settings' sizes,
// iters, warmup, check_iters and timeout_s, and the member's GPUs, env and
// library_paths (no unique_id: the caller adds it).
nlohmann::json NcclAgentArgs(const NcclMember& m, int nranks, int rank_base, const NcclSettings& s);

// Takes one result of the agent's `nccl` command ("size", "nccl_log",
// "setup", "outcome"; others are ignored) into *rep. true for "outcome".
bool AddNcclResult(const std::string& name, const nlohmann::json& data, RankReport* rep);

// Runs each group as one communicator, all groups at once, and returns one
// RankReport list per group (in member order). Never throws and never
// blocks past NcclAgentDeadlinesS(settings) + slack per test.
// REQUIRES: the groups share no member; every pointer outlives the call.
std::vector<std::vector<RankReport>> RunNcclBatch(
    StageContext& ctx, const std::vector<std::vector<NcclMember*>>& groups,
    const NcclSettings& settings);

}  // namespace cc
