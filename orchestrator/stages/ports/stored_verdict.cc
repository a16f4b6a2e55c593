#include "orchestrator/stages/ports/stored_verdict.h"

#include <map>

namespace cc {
namespace {

std::string SharedKind(const std::string& ports_kind) {
  static const std::map<std::string, std::string> kShared = {
      {"nothing", "widespread"},     {"isolated", "bad-node"},
      {"sender", "bad-node"},        {"receiver", "port-blocked"},
      {"ephemeral", "port-blocked"}, {"port-everywhere", "port-blocked"},
      {"pair", "bad-link"}};
  auto it = kShared.find(ports_kind);
  return it == kShared.end() ? ports_kind : it->second;
}

// What the ports stage establishes as a cause (verdict.h): a node's own
// firewall, routing or link (it fails with every peer, or only its own
// ports), or one link (a pair, or one way of it). A port failing
// everywhere, or nothing at all, is the cluster's, not a node's.
CauseScope ScopeOf(const std::string& ports_kind) {
  static const std::map<std::string, CauseScope> kScope = {
      {"isolated", CauseScope::kNode},   {"sender", CauseScope::kNode},
      {"receiver", CauseScope::kNode},   {"ephemeral", CauseScope::kNode},
      {"wrong-host", CauseScope::kNode}, {"node-lost", CauseScope::kNode},
      {"pair", CauseScope::kLink},       {"one-way", CauseScope::kLink}};
  auto it = kScope.find(ports_kind);
  return it == kScope.end() ? CauseScope::kNone : it->second;
}

}  // namespace

Verdict StoredVerdict(const PortVerdict& v) {
  Verdict out;
  out.kind = SharedKind(v.kind);
  out.severity = v.severity;
  out.nodes = v.nodes;
  out.pairs = v.pairs;
  out.stage = "ports";
  out.check = FormatTcpPorts(v.ports);
  // Short enough for one line of a report.
  if (out.check.size() > 200) out.check = out.check.substr(0, 197) + "...";
  out.summary = v.message;
  out.evidence = v.evidence;
  out.evidence["stage_kind"] = v.kind;
  out.next_step = v.next_step;
  if (IsFailOrHang(v.severity)) out.cause = ScopeOf(v.kind);
  return out;
}

}  // namespace cc
