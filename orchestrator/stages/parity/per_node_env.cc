#include "orchestrator/stages/parity/per_node_env.h"

namespace cc {

const std::vector<std::string>& PerNodeEnvNames() {
  static const std::vector<std::string> kNames = {
      // Who the node is.
      "HOSTNAME",
      "HOST",
      "NCCL_HOSTID",
      // Which devices this node's processes see: differs where nodes differ
      // in GPUs or NICs, or where a scheduler hands out a node's share.
      "CUDA_VISIBLE_DEVICES",
      "NVIDIA_VISIBLE_DEVICES",
      "ROCR_VISIBLE_DEVICES",
      "HIP_VISIBLE_DEVICES",
      "GPU_DEVICE_ORDINAL",
      // Ranks, as launchers set them per process or node.
      "RANK",
      "LOCAL_RANK",
      "NODE_RANK",
      "GROUP_RANK",
      "OMPI_COMM_WORLD_RANK",
      "OMPI_COMM_WORLD_LOCAL_RANK",
      "OMPI_COMM_WORLD_NODE_RANK",
      "PMI_RANK",
      "PMIX_RANK",
      "MV2_COMM_WORLD_RANK",
      // The session's own place and time.
      "PWD",
      "OLDPWD",
      "XDG_RUNTIME_DIR",
      "XDG_SESSION_ID",
      "TMPDIR",
  };
  return kNames;
}

const std::vector<std::string>& PerNodeEnvPrefixes() {
  // SLURM_NODEID, SLURM_PROCID, SLURMD_NODENAME; SSH_CONNECTION names the
  // node's own address; PBS_NODENUM; LSF's LSB_ host lists.
  static const std::vector<std::string> kPrefixes = {"SLURM_", "SLURMD_", "SSH_",
                                                     "PBS_",   "LSB_",    "PMIX_"};
  return kPrefixes;
}

bool IsPerNodeEnv(const std::string& var) {
  for (const std::string& n : PerNodeEnvNames()) {
    if (var == n) return true;
  }
  for (const std::string& p : PerNodeEnvPrefixes()) {
    if (var.size() > p.size() && var.compare(0, p.size(), p) == 0) return true;
  }
  return false;
}

std::string EnvVarOfField(const std::string& field) {
  for (const char* prefix : {"nccl_env.", "env."}) {
    std::string p = prefix;
    if (field.size() > p.size() && field.compare(0, p.size(), p) == 0)
      return field.substr(p.size());
  }
  return "";
}

}  // namespace cc
