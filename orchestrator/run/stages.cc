// The table of stages, in run order. One row per stage; each lives in its
// own file (*_stage.cc).
#include "orchestrator/run/stage.h"
#include "orchestrator/run/stages_decl.h"

namespace cc {

const std::vector<StageEntry>& Stages() {
  static const std::vector<StageEntry> kStages = {
      {"facts", "collect node facts through the agent", MakeFactsStage},
      {"parity", "judge versions against pins, the majority and rules", MakeParityStage},
      {"nics", "which network NCCL and MPI should use: reachability, DF-tested MTU, decoys",
       MakeNicsStage},
      {"ports", "every node pair, both ways: SSH, rendezvous and ephemeral ports", MakePortsStage},
      {"nccl", "AllReduce intra-node, per pair, whole cluster; transport proof; bad-node isolation",
       MakeNcclStage},
      {"mpi", "Open MPI across the nodes: launch, exact MPI_Allreduce, pair ping-pong",
       MakeMpiStage},
      // Diagnostics, not in the default list.
      {"sleep", "hold an agent busy on every node (tests of Ctrl-C)", MakeSleepStage,
       /*in_default=*/false},
  };
  return kStages;
}

const StageEntry* FindStage(const std::string& name) {
  for (const auto& s : Stages()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

std::vector<std::string> DefaultStageNames() {
  std::vector<std::string> out;
  for (const auto& s : Stages()) {
    if (s.in_default) out.push_back(s.name);
  }
  return out;
}

}  // namespace cc
