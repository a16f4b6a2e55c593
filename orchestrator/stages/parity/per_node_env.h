// Environment variables that are meant to differ from node to node: a host
// id, a rank, a node name, a node-specific device list, the SSH session's
// own variables. Parity never judges them against the cluster majority (an
// [expect] pin still applies). The list is explicit so that an operator
// can read what is exempt; everything not on it is voted.
//
// Pure; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace cc {

// Whether `var` ("NCCL_HOSTID", "SLURM_NODEID") is on the list: one of
// PerNodeEnvNames() or under one of PerNodeEnvPrefixes().
bool IsPerNodeEnv(const std::string& var);

// The variable a flat parity field names: "nccl_env.NCCL_HOSTID" and
// "env.HOSTNAME" -> the name after the first dot; "" for other fields.
std::string EnvVarOfField(const std::string& field);

// The list itself, for documentation and tests.
const std::vector<std::string>& PerNodeEnvNames();
const std::vector<std::string>& PerNodeEnvPrefixes();  // "SLURM_", ...

}  // namespace cc
