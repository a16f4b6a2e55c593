#include "orchestrator/stages/nccl/nccl_policy.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace cc {
namespace {

struct Finding {
  Outcome outcome;
  std::string message;
  std::vector<std::string> evidence;
};

bool SameNet(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool IsNetPath(const ChannelPath& p) { return p.transport == "NET" || p.transport == "COLLNET"; }

void AddEvidence(std::vector<std::string>* ev, const std::string& line) {
  if (line.empty() || ev->size() >= kMaxEvidenceLines) return;
  if (std::find(ev->begin(), ev->end(), line) == ev->end()) ev->push_back(line);
}

std::optional<Finding> CheckNetwork(const NcclLogSummary& s, const std::string& want, bool applies,
                                    size_t net_paths) {
  if (!applies) {
    return Finding{Outcome::kSkip,
                   "single-node communicator: no NET path, the network "
                   "policy does not apply",
                   {}};
  }
  if (s.network.empty() && net_paths == 0) {
    return Finding{Outcome::kError,
                   "the NCCL log names no network (NCCL_DEBUG_SUBSYS must "
                   "include INIT,NET)",
                   {}};
  }
  Finding f{Outcome::kFail, "", {}};
  size_t wrong = 0;
  if (!s.network.empty() && !SameNet(s.network, want)) {
    AddEvidence(&f.evidence, s.network_line);
  }
  for (const auto& p : s.paths) {
    if (IsNetPath(p) && !SameNet(p.net, want)) {
      ++wrong;
      AddEvidence(&f.evidence, p.line);
    }
  }
  if (f.evidence.empty()) return std::nullopt;
  f.message = "NCCL used network '" + s.network + "' where '" + want + "' is required";
  if (wrong > 0) {
    f.message += " (" + std::to_string(wrong) + " of " + std::to_string(net_paths) + " NET paths)";
  }
  return f;
}

std::optional<Finding> CheckGdrdma(const NcclLogSummary& s, size_t net_paths) {
  if (net_paths == 0) {
    if (s.nnodes > 1) {
      return Finding{Outcome::kError,
                     "multi-node communicator but no NET path in the log "
                     "(NCCL_DEBUG_SUBSYS must include INIT,NET)",
                     {}};
    }
    return Finding{Outcome::kSkip, "no NET path in the log: GPUDirect RDMA does not apply", {}};
  }
  Finding f{Outcome::kFail, "", {}};
  size_t lacking = 0;
  for (const auto& p : s.paths) {
    if (IsNetPath(p) && !p.gdrdma) {
      ++lacking;
      AddEvidence(&f.evidence, p.line);
    }
  }
  if (lacking == 0) return std::nullopt;
  for (const auto& g : s.gdr) {
    if (!g.enabled) AddEvidence(&f.evidence, g.line);
  }
  f.message = std::to_string(lacking) + " of " + std::to_string(net_paths) +
              " NET paths lack GPUDirect RDMA (no /GDRDMA)";
  return f;
}

std::optional<Finding> CheckSocketFallback(const NcclLogSummary& s, const TransportHints& hints) {
  bool ib_seen = hints.ib_devices_present ||
                 std::any_of(s.nets_with_devices.begin(), s.nets_with_devices.end(),
                             [](const std::string& n) { return SameNet(n, "IB"); });
  if (s.nnodes <= 1 || !ib_seen) return std::nullopt;
  Finding f{Outcome::kWarn, "", {}};
  for (const auto& p : s.paths) {
    if (IsNetPath(p) && SameNet(p.net, "Socket")) AddEvidence(&f.evidence, p.line);
  }
  if (f.evidence.empty()) return std::nullopt;
  f.evidence.insert(f.evidence.begin(), s.network_line);
  if (f.evidence.size() > kMaxEvidenceLines) f.evidence.resize(kMaxEvidenceLines);
  f.message =
      "multi-node communicator runs over NET/Socket although IB devices are "
      "present (check NCCL_IB_HCA, NCCL_NET, rdma-core)";
  return f;
}

}  // namespace

TransportVerdict JudgeTransport(const NcclLogSummary& summary, const TransportPolicy& policy,
                                const TransportHints& hints) {
  if (summary.lines == 0) {
    return {Outcome::kError,
            "the NCCL log is empty (NCCL_DEBUG=INFO not applied or the log "
            "file not found)",
            {}};
  }
  size_t net_paths = std::count_if(summary.paths.begin(), summary.paths.end(), IsNetPath);
  bool multi_node = net_paths > 0 || summary.nnodes > 1;
  std::vector<Finding> findings;
  auto add = [&](std::optional<Finding> f) {
    if (f) findings.push_back(std::move(*f));
  };
  if (!policy.require_net.empty()) {
    add(CheckNetwork(summary, policy.require_net, multi_node, net_paths));
  }
  if (policy.require_gdrdma) add(CheckGdrdma(summary, net_paths));
  add(CheckSocketFallback(summary, hints));
  if (!summary.warnings.empty()) {
    Finding f{Outcome::kWarn,
              std::to_string(summary.warnings.size()) + " NCCL WARN line(s) in the log",
              {}};
    for (const auto& w : summary.warnings) AddEvidence(&f.evidence, "NCCL WARN " + w);
    findings.push_back(std::move(f));
  }

  TransportVerdict v;
  for (const auto& f : findings) v.outcome = Worse(v.outcome, f.outcome);
  for (const auto& f : findings) {
    if (f.outcome != v.outcome) continue;
    if (!v.message.empty()) v.message += "; ";
    v.message += f.message;
    for (const auto& e : f.evidence) AddEvidence(&v.evidence, e);
  }
  if (v.outcome == Outcome::kPass) {
    v.message = "network " + (summary.network.empty() ? std::string("unknown") : summary.network);
    if (net_paths > 0) {
      size_t gdr = std::count_if(summary.paths.begin(), summary.paths.end(),
                                 [](const ChannelPath& p) { return IsNetPath(p) && p.gdrdma; });
      v.message +=
          ", " + std::to_string(gdr) + "/" + std::to_string(net_paths) + " NET paths with GDRDMA";
    }
  }
  return v;
}

}  // namespace cc
