#include "orchestrator/stages/ports/ports_wording.h"

#include "common/hostlist.h"

namespace cc {

std::string PortPhrase(const std::string& check, const nlohmann::json& evidence) {
  std::string proto = check, port;
  if (auto slash = check.find('/'); slash != std::string::npos) {
    proto = check.substr(0, slash);
    port = check.substr(slash + 1);
  }
  if (evidence.is_object() && evidence.contains("port_range") &&
      evidence["port_range"].is_string()) {
    port = evidence["port_range"].get<std::string>();
  }
  return port.empty() ? proto : proto + " " + port;
}

namespace {

PairWording BadNode(const PairFinding& f) {
  PairWording w;
  const std::string& node = f.nodes.front();
  std::string port = PortPhrase(f.check, f.evidence);
  if (f.receiver_only) {
    w.kind = "port-blocked";
    w.summary = node + " does not accept " + f.check + " from its peers (" + f.states + " from " +
                f.count + ")";
    w.next_step = "open " + port + " inbound on " + node + "'s firewall";
  } else if (f.sender_only) {
    w.next_step = "check " + node + "'s outbound firewall and routes for " + port;
  } else {
    w.next_step = "check " + node + "'s firewall for " + port + " in both directions";
  }
  return w;
}

}  // namespace

PairWording WordPortsFinding(const PairFinding& f) {
  switch (f.pattern) {
    case PairPattern::kHang:
      return {"", "", "look for a stuck listener or agent on " + FoldHostlist(f.nodes)};
    case PairPattern::kBadNode:
      if (f.nodes.empty()) return {};
      return BadNode(f);
    case PairPattern::kWidespread:
      return {"port-blocked", "",
              "open " + PortPhrase(f.check, nlohmann::json::object()) +
                  " on every node (firewall), and check that nothing else holds the port"};
    case PairPattern::kOneWay:
      if (f.nodes.size() != 2) return {};
      return {"", "",
              "allow " + PortPhrase(f.check, f.evidence) + " from " + f.nodes[0] + " in " +
                  f.nodes[1] + "'s firewall"};
    case PairPattern::kBadLink:
      if (f.nodes.size() != 2) return {};
      return {"", "",
              "check the firewalls of " + f.nodes[0] + " and " + f.nodes[1] + " for " +
                  PortPhrase(f.check, f.evidence) + " between them"};
  }
  return {};
}

}  // namespace cc
