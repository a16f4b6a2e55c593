// The Slurm commands transport = "slurm" runs, as argv, and what their
// output says. Pure: the transport (slurm_transport.h) runs them.
//
//   sinfo   -h -N -n NODES -o "%N|%T|%E"  -> each node's state and reason
//   salloc  --no-shell -N n -w NODES --immediate=S ...  -> "Granted job allocation 42"
//   sbcast  -j JOB -f AGENT DEST          (Slurm's tree broadcast)
//   srun    --jobid=JOB --overlap -N n --ntasks-per-node=1 -w NODES AGENT --connect=H:P
//   scancel JOB  (or JOB.STEP ...)
//   squeue  -h -s -j JOB -o "%i|%j"       -> the job's steps and their names
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/inventory/inventory.h"

namespace cc {

// settings.bin_dir + "/" + program, or the program alone (found on PATH).
std::string SlurmProgram(const SlurmSettings& settings, const std::string& program);

struct SlurmNodeState {
  std::string state;   // sinfo's %T: "idle", "drained", "down*", "mixed", ...
  std::string reason;  // sinfo's %E ("none" when none)
};

// sinfo lines "NODE|STATE|REASON" -> node -> state. A node listed once per
// partition keeps its first line.
std::map<std::string, SlurmNodeState> ParseSinfoNodes(const std::string& out);

// What a node's state means for a run: it can be used, it was taken out
// of service by the site (drain: `skip` with Slurm's reason), or Slurm
// cannot reach it (down, not responding: the node fails to connect).
enum class SlurmAvailability { kUsable, kDrained, kDown };
SlurmAvailability AvailabilityOf(const SlurmNodeState& s);
// For the node's result: "drained in Slurm: bad cable" / "down in Slurm
// (down*): Not responding".
std::string DescribeSlurmState(const SlurmNodeState& s);

std::vector<std::string> SinfoArgv(const SlurmSettings& s, const std::vector<std::string>& nodes);
std::vector<std::string> SallocArgv(const SlurmSettings& s, const std::vector<std::string>& nodes);
// The job id salloc granted, from its stderr; nullopt when it did not.
std::optional<std::string> GrantedJobId(const std::string& salloc_stderr);
std::vector<std::string> SbcastArgv(const SlurmSettings& s, const std::string& job,
                                    const std::string& source, const std::string& dest);
// One agent on each of `nodes`, dialling back to `connect`.
std::vector<std::string> SrunAgentsArgv(const SlurmSettings& s, const std::string& job,
                                        const std::vector<std::string>& nodes,
                                        const std::vector<std::string>& agent_argv);
std::vector<std::string> ScancelArgv(const SlurmSettings& s, const std::string& job_or_step);

// The name (srun -J) of every step a run starts: "clustercheck-PID", so
// that a run inside the user's own allocation cancels its own steps when it
// ends or is interrupted, and neither the allocation nor another run's.
std::string RunStepName(long pid);
// RunStepName of this process.
const std::string& OwnStepName();
std::vector<std::string> SqueueStepsArgv(const SlurmSettings& s, const std::string& job);
// The ids ("JOB.STEP") of squeue's step lines "ID|NAME" named `name`.
std::vector<std::string> StepsNamed(const std::string& squeue_out, const std::string& name);

// srun's and salloc's error lines ("srun: error: ..."), joined, for a
// result that quotes Slurm; "" when there are none.
std::string SlurmErrorLines(const std::string& stderr_text);

}  // namespace cc
