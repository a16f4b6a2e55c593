// SlurmTransport (transport = "slurm"): the site's Slurm launches the
// agents instead of our ssh. Begin():
//   1. sinfo: a drained node is `skip` with Slurm's reason, a down one
//      fails to connect with Slurm's words;
//   2. the allocation: the one this runs inside (SLURM_JOB_ID, from salloc
//      or sbatch), or one asked for with `salloc --no-shell` (and given
//      back with scancel at the end);
//   3. the agent: [slurm] agent_path on a shared filesystem as it is, or
//      copied by sbcast (Slurm's own tree broadcast) to agent_dir under a
//      content-addressed name, only when a node lacks this build;
//   4. a listener on this machine for the run's length, and one
//      `srun --ntasks-per-node=1` starting an agent on every node, which
//      dials back (agent/dial_back.h) with the run's secret, given through
//      the environment.
// Connect(node) then waits for that node's agent. Later agents on a node
// (the nccl stage starts one per rank) are Slurm steps of one task
// (`srun --overlap -w node`) dialling back in their own slot. At the end
// (and on Ctrl-C) every srun is stopped and our allocation cancelled, so
// nothing is left in squeue.
//
// Threading: Connect and the connections' Start may be called from any
// thread; Begin once before them.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "orchestrator/transport/dial_back_listener.h"
#include "orchestrator/transport/slurm_commands.h"
#include "orchestrator/transport/transport.h"

namespace cc {

class SlurmTransport : public Transport {
 public:
  // `env`: where SLURM_JOB_ID comes from (the process's in a run).
  explicit SlurmTransport(Environment env = ProcessEnvironment);
  ~SlurmTransport() override;

  std::string name() const override { return "slurm"; }
  Status Begin(const Inventory& inventory, const std::string& agent_binary) override;
  Result<std::unique_ptr<Connection>> Connect(const Node& node, Deadline deadline) override;
  nlohmann::json LauncherMeta() const override;
  std::string AllocationId() const override { return job_; }
  bool Reconnects() const override { return false; }

  // One more agent on `node` as a Slurm step; `cmd` is the agent's command
  // line as the fleet gives it (argv[0] is replaced by the node's copy).
  Result<std::unique_ptr<RemoteProcess>> StartStep(const Node& node, const CommandLine& cmd,
                                                   Deadline deadline);
  // What the srun that started every node's first agent said on stderr
  // so far (Slurm's reason when a step ended).
  std::string MainSrunSaid();
  // Stops every srun, cancels any step of ours still in squeue (inside the
  // user's allocation) and gives our own allocation back. Idempotent.
  void End();

 private:
  Status Allocate(const std::vector<std::string>& usable);
  Status PlaceAgent(const std::string& agent_binary, const std::vector<std::string>& usable);
  Status Listen(const Inventory& inv, const std::vector<std::string>& usable);
  std::vector<std::string> AgentArgv(const CommandLine& cmd) const;
  // Why `node`'s agent did not come: srun's own error lines when it
  // ended, else `waited`.
  Status WhyNoDialBack(const std::string& node, RemoteProcess* srun, const Status& waited);
  // Inside the user's allocation: scancel the steps named ours (OwnStepName).
  void CancelOwnSteps();

  Environment env_;
  SlurmSettings settings_;
  std::map<std::string, SlurmNodeState> states_;
  Status launch_;  // not ok: why no agent can start (salloc or sbcast refused)
  std::string job_;
  bool own_allocation_ = false;
  std::string agent_path_;  // on the nodes
  int copied_to_ = 0;       // nodes sbcast copied the agent to
  std::string connect_;     // HOST:PORT the agents dial
  std::string secret_;
  std::map<std::string, std::string> main_env_;
  std::unique_ptr<DialBackListener> listener_;
  std::mutex srun_mu_;  // guards main_srun_ (its stderr is pumped on demand)
  std::unique_ptr<RemoteProcess> main_srun_;
  std::atomic<int> next_slot_{1};
  bool ended_ = false;
};

}  // namespace cc
