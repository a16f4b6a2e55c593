// Judges the transport NCCL really used (from its parsed log) against what
// the operator asked for: a network ("IB" must not fall back to Socket) and
// GPUDirect RDMA on every NET path. Pure.
#pragma once

#include <string>
#include <vector>

#include "common/outcome.h"
#include "orchestrator/stages/nccl/nccl_log.h"

namespace cc {

struct TransportPolicy {
  // Network every inter-node path must use: "" (any), "IB", "Socket", or a
  // plugin's name. Compared case-insensitively. Default: any.
  std::string require_net;
  // Every NET/COLLNET path must show "/GDRDMA". Default: false.
  bool require_gdrdma = false;
};

struct TransportHints {
  // The nics stage found IB/RoCE devices on the node(s). With no policy, a
  // multi-node comm over NET/Socket then earns a warning. The log's own
  // "NET/IB : Using [0]mlx5_0..." counts as well.
  bool ib_devices_present = false;
};

struct TransportVerdict {
  Outcome outcome = Outcome::kPass;
  std::string message;
  // Log lines that show the reason, quoted verbatim (at most
  // kMaxEvidenceLines).
  std::vector<std::string> evidence;
};

inline constexpr size_t kMaxEvidenceLines = 8;

// Returns pass, warn (fallback to Socket with IB present; NCCL WARN lines),
// fail (policy broken), skip (the policy does not apply: no NET path to
// check) or error (the log says nothing: empty, or no network named).
TransportVerdict JudgeTransport(const NcclLogSummary& summary, const TransportPolicy& policy,
                                const TransportHints& hints = {});

}  // namespace cc
