// [slurm] steps = true: the mpi and nccl stages start their MPI programs
// (clustercheck-mpi-probe, clustercheck-nccl-mpi) as steps of the run's
// allocation, one task per rank, wired up by Slurm's PMI (srun --mpi=pmix),
// instead of mpirun over ssh. No ssh into the nodes is needed, and what
// stops a step (its deadline, Ctrl-C: srun passes SIGTERM to the tasks) is
// Slurm's. Pure: the stages run the argv.
//
//   env SLURM_HOSTFILE=FILE K=V ... srun --jobid=JOB --overlap -J clustercheck
//       -N nodes -n ranks --distribution=arbitrary --mpi=pmix
//       --kill-on-bad-exit=0 --input=none --unbuffered --label
//       SRUN_ARGS... PROGRAM ARGS...
//
// Rank r runs on the r-th line of FILE (SrunStepHostfile): the stages judge
// rank r as their r-th node, and Slurm's own block distribution would put
// the ranks in its node order instead, naming the wrong node.
//
// The environment (Open MPI's MCA settings, NCCL's) goes to srun itself,
// which passes all of its environment to the tasks: `--export=K=V` would
// split a value such as "eth0,eth1" at its comma.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "orchestrator/inventory/inventory.h"

namespace cc {

struct SlurmStep {
  std::string job;                      // the allocation the agents run in
  std::vector<std::string> rank_nodes;  // rank r runs on rank_nodes[r]
  std::string hostfile;                 // where SrunStepHostfile's text is
  std::map<std::string, std::string> env;
  std::vector<std::string> program;  // the program on the nodes, then its args
};

// One line per rank: its node.
std::string SrunStepHostfile(const SlurmStep& step);

// kBadArgument when the job, the ranks, the hostfile or the program is
// missing, or an env name is not a variable name.
Result<std::vector<std::string>> SrunStepArgv(const SlurmSettings& s, const SlurmStep& step);

// srun --label's "R: " prefix off a line; *rank gets R (-1 when the line
// has none, and then it comes back as it was).
std::string StripSrunLabel(const std::string& line, int* rank);

}  // namespace cc
