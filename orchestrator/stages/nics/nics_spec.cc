#include "orchestrator/stages/nics/nics_spec.h"

#include <sstream>

#include "orchestrator/analysis/verdict_next_step.h"

namespace cc {
namespace {

using Json = nlohmann::json;
using K = StageSettingKey;

constexpr const char* kName = "nics";

StageEstimate Estimate(const PlanInput& in) {
  constexpr double kFactsS = 5;  // the network facts, when the facts stage gave none
  constexpr double kRoundS = 2;  // one round of reachability probes
  return {Plural(in.nodes, "node", "nodes") + ", " + RoundsPhrase(in),
          kFactsS + static_cast<double>(in.rounds) * kRoundS};
}

// The recommendation as lines to paste, the bad nodes on the chosen
// network and the excluded subnets, each with its reason
// (nic_recommend.h SelectionJson).
StageTerminalNotes Summarize(const Json& n) {
  if (!n.is_object() || !n.contains("env_lines")) return {};
  auto str = [](const Json& j, const char* k) {
    return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
  };
  std::ostringstream o;
  bool chosen = n.contains("subnet") && n["subnet"].is_string();
  o << "\nnics: " << (chosen ? "" : "nothing to recommend: ") << str(n, "reason") << "\n";
  for (const auto& l : n["env_lines"]) {
    if (l.is_string()) o << "  " << l.get<std::string>() << "\n";
  }
  for (const auto& sub : n.value("subnets", Json::array())) {
    if (!sub.is_object()) continue;
    if (chosen && str(sub, "subnet") == n["subnet"].get<std::string>()) {
      for (const auto& p : sub.value("problems", Json::array())) {
        if (p.is_object()) o << "  " << str(p, "outcome") << ": " << str(p, "message") << "\n";
      }
    }
    if (!str(sub, "excluded").empty()) {
      o << "  excluded " << str(sub, "subnet") << ": " << str(sub, "excluded") << "\n";
    }
  }
  for (const auto& note : n.value("notes", Json::array())) {
    if (note.is_string()) o << "  note: " << note.get<std::string>() << "\n";
  }
  return {{}, o.str()};
}

// A failing interface check ("ib0", value "down") is a cable or a switch
// port before anything else.
std::string CableStep(const NodeResult& r, const std::string& who) {
  return "check the cable and switch port of " + who + "'s " + r.check +
         (r.value.empty() ? "" : " (" + r.value + ")");
}

// A node that fails with every peer: its own failing interface, if the
// stage found one.
PairWording WordPairFinding(const PairFinding& f) {
  if (f.pattern != PairPattern::kBadNode || f.nodes.empty() || !f.run) return {};
  const std::string& node = f.nodes.front();
  for (const auto& r : f.run->node_results) {
    bool bad = IsFailOrHang(r.outcome);
    if (r.node == node && r.stage == kName && bad) return {"", "", CableStep(r, node)};
  }
  return {"", "", "check " + node + "'s interfaces and cabling"};
}

}  // namespace

const StageSpec& NicsSpec() {
  static const StageSpec kSpec{
      .name = kName,
      .summary = "which network NCCL and MPI should use: reachability, DF-tested MTU, decoys",
      .settings =
          {
              {kName, "mtu_probe", K::kBool, 0,
               "probe the path MTU between nodes with DF-set packets", "true"},
              {kName, "timeout_ms", K::kInt, 1, "deadline for one reachability probe", "2500"},
              {kName, "senders_per_receiver", K::kInt, 1,
               "probes in flight per sender (default 8); each sender takes its peers in an "
               "order rotated by its own place, so a receiver is probed by about this many "
               "senders at once, whatever the cluster size",
               "8"},
              {kName, "port", K::kInt, 0,
               "port the agents listen on at every address, tcp and udp (default 29400; "
               "a free one where taken; 0: always a free one)",
               "29400"},
          },
      .make = MakeNicsStage,
      .estimate = Estimate,
      .summarize = Summarize,
      .subnet_mtus = SubnetMtus,
      .node_fail_next_step = CableStep,
      .word_pair_finding = WordPairFinding,
  };
  return kSpec;
}

}  // namespace cc
