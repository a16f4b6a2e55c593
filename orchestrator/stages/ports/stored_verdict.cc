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
  return out;
}

}  // namespace cc
