// Judging health readings against the rest of the cluster, where no fixed
// rule fits: a port down where the others have it up (a port down
// everywhere is simply not cabled), an IB rate below the majority's, a
// GPU pair that lost its NVLink, a GPU whose nearest NIC is across the
// CPU interconnect, and GPU modes (persistence, MIG, ECC) unlike the
// majority's. "The majority" is taken among nodes with the same GPU model
// and count (topology) or the same port name (IB). Pure.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "orchestrator/stages/health/health_finding.h"

namespace cc {

struct ClusterHealthInput {
  // node -> the agent's health answer (sections gpu, kernel_log, ib).
  std::map<std::string, nlohmann::json> health;
  // node -> its facts (for network.gpu_locality); may be empty.
  std::map<std::string, nlohmann::json> facts;
  // [expect] ib_rate, in Gb/s ("400" or "400 Gb/sec"); nullopt when unset.
  std::optional<double> expected_ib_rate_gbps;
};

// node -> its findings (only nodes with any).
std::map<std::string, std::vector<HealthFinding>> JudgeCluster(const ClusterHealthInput& in);

}  // namespace cc
