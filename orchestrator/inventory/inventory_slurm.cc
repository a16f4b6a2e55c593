// [slurm]: how transport = "slurm" asks Slurm for nodes, copies the agent
// and starts it (orchestrator/transport/slurm_transport.h).
#include "orchestrator/inventory/inventory.h"
#include "orchestrator/inventory/inventory_toml.h"

namespace cc::inventory_internal {

void ParseSlurm(const toml::table& t, SlurmSettings& slurm, ErrorList& err) {
  static const std::vector<std::string> kKeys = {
      "partition",  "reservation", "account", "time_limit",       "srun_args",
      "agent_path", "agent_dir",   "listen",  "launch_timeout_s", "allocation_timeout_s",
      "bin_dir",    "steps",       "step_mpi"};
  for (auto&& [key, value] : t) {
    std::string k(key.str());
    std::string p = "slurm." + k;
    auto set_string = [&](std::string& field, bool may_be_empty) {
      std::optional<std::string> s = GetString(value, p, err);
      if (s && s->empty() && !may_be_empty) {
        err.Add(value.source(), p, "must not be empty");
      } else if (s) {
        field = *s;
      }
    };
    auto set_positive = [&](double& field) {
      if (auto v = GetPositive(value, p, err)) field = *v;
    };
    if (k == "partition") {
      set_string(slurm.partition, true);
    } else if (k == "reservation") {
      set_string(slurm.reservation, true);
    } else if (k == "account") {
      set_string(slurm.account, true);
    } else if (k == "time_limit") {
      set_string(slurm.time_limit, false);
    } else if (k == "agent_path") {
      set_string(slurm.agent_path, true);
    } else if (k == "agent_dir") {
      set_string(slurm.agent_dir, false);
    } else if (k == "bin_dir") {
      set_string(slurm.bin_dir, true);
    } else if (k == "steps") {
      if (auto v = GetBool(value, p, err)) slurm.steps = *v;
    } else if (k == "step_mpi") {
      set_string(slurm.step_mpi, false);
    } else if (k == "listen") {
      std::optional<std::string> s = GetString(value, p, err);
      if (s && !IsListenAddress(*s)) {
        err.Add(value.source(), p, Shown(*s) + " is not ADDRESS or ADDRESS:PORT");
      } else if (s) {
        slurm.listen = *s;
      }
    } else if (k == "srun_args") {
      if (auto v = GetStringArray(value, p, err)) slurm.srun_args = *v;
    } else if (k == "launch_timeout_s") {
      set_positive(slurm.launch_timeout_s);
    } else if (k == "allocation_timeout_s") {
      set_positive(slurm.allocation_timeout_s);
    } else {
      err.Add(key.source(), p, UnknownKey(k, kKeys));
    }
  }
}

}  // namespace cc::inventory_internal
