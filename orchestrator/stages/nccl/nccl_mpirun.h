// The `nccl` stage's second launcher ([stages.nccl] launcher = "mpirun"):
// each test is one mpirun of clustercheck-nccl-mpi (mpi/nccl_mpi_probe.cc),
// one rank per GPU, rank 0's ncclUniqueId sent to the others by MPI_Bcast,
// the way nccl-tests users run. The default launcher stays the agent's own
// rendezvous (nccl_launch.h); both give the same RankReports, so every
// phase (intra, pairs, cluster, isolate) and the judgement are shared.
//
// Ranks: member i of a group holds ranks rank_base(i) .. + gpus - 1 (its
// hostfile line has slots=gpus and mpirun maps by slot), so each rank's
// node is known from its number alone; every rank is one RankReport.
//
// This header's first half is pure (argv-free pieces and the output
// parser); RunNcclMpirunBatch does the I/O.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/stages/nccl/nccl_launch.h"
#include "orchestrator/stages/nccl/nccl_plan.h"

namespace cc {

inline constexpr char kNcclMpiProbe[] = "clustercheck-nccl-mpi";
// The launcher under transport = "slurm" with [slurm] steps = true: each
// test is `srun --mpi=pmix` of the probe over the test's nodes, rank r on
// NcclRankNodes(group)[r] (slurm_steps.h), instead of mpirun over ssh.
inline constexpr char kNcclSlurmStepsLauncher[] = "slurm-steps";
inline constexpr char kNcclMpiLinePrefix[] = "CCNCCL ";

// Rank r's node name, for the group's ranks in order.
std::vector<std::string> NcclRankNodes(const std::vector<NcclMember*>& group);

// The probe's --request JSON: the settings' sizes, iters, warmup,
// timeout_s, dtypes (unless float alone), and per rank its node's env and library_paths and its GPU
// (0 .. gpus-1 within its node, as the agent launcher numbers them).
nlohmann::json NcclMpiRequest(const std::vector<NcclMember*>& group, const NcclSettings& s);

// One "ADDRESS slots=GPUS" line per member (after a comment naming it);
// `addresses` parallel to the group. Local runs (every node is this
// machine) get one "localhost slots=TOTAL" line instead.
std::string NcclMpiHostfile(const std::vector<NcclMember*>& group,
                            const std::vector<std::string>& addresses, bool local);

// What came back from one mpirun of the probe.
struct NcclMpirunOutput {
  std::vector<std::string> lines;  // stdout, then stderr
  bool hung = false;               // killed at the deadline
  int exit_code = -1;
  double timeout_s = 0;
};

// One RankReport per rank (node from rank_nodes) from the probe's lines
// (anywhere in a line, after mpirun's --tag-output prefix). A rank with no
// outcome: `hang` when mpirun was killed at its deadline; else `error` at
// "launch" when the rank never said hello (mpirun could not start it),
// `fail` when it started and ended without one; each reason carries
// mpirun's exit code and the last lines Open MPI printed.
std::vector<RankReport> ParseNcclMpirun(const std::vector<std::string>& rank_nodes,
                                        const NcclMpirunOutput& out);

// Runs each group as one mpirun (a Slurm step with settings.launcher ==
// kNcclSlurmStepsLauncher), all at once; the same contract as
// RunNcclBatch. Without mpirun (or not Open MPI's), without the probe
// beside this binary, or with no allocation for the steps, every rank is
// `skip` with the reason. *argvs (may be
// null) gets each group's mpirun argv (empty when none ran).
std::vector<std::vector<RankReport>> RunNcclMpirunBatch(
    StageContext& ctx, const std::vector<std::vector<NcclMember*>>& groups,
    const NcclSettings& settings, std::vector<std::vector<std::string>>* argvs);

}  // namespace cc
