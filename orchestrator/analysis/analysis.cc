// Node-level verdicts (connect, hangs, parity, failing node checks) and
// the ordering of all verdicts. Pair rules live in analysis_pairs.cc.
#include "orchestrator/analysis/analysis.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "common/hostlist.h"
#include "common/json_read.h"
#include "orchestrator/analysis/analysis_confirm.h"
#include "orchestrator/analysis/analysis_internal.h"
#include "orchestrator/analysis/causes.h"
#include "orchestrator/analysis/verdict_next_step.h"
#include "orchestrator/run/confirm.h"
#include "orchestrator/stages/stages.h"

namespace cc {
namespace analysis {

NodeOrder::NodeOrder(const RunData& d) {
  auto add = [&](const std::string& n) { index_.emplace(n, index_.size()); };
  for (const auto& n : d.NodeNames()) add(n);
  for (const auto& r : d.node_results) {
    if (r.node != "*") add(r.node);
  }
  for (const auto& r : d.pair_results) {
    add(r.src);
    add(r.dst);
  }
  for (const auto& n : d.routine_pairs.nodes()) add(n);
}

size_t NodeOrder::Index(const std::string& node) const {
  auto it = index_.find(node);
  return it == index_.end() ? index_.size() : it->second;
}

std::vector<std::string> NodeOrder::Sorted(const std::set<std::string>& nodes) const {
  std::vector<std::string> out(nodes.begin(), nodes.end());
  std::stable_sort(out.begin(), out.end(),
                   [&](const auto& a, const auto& b) { return Index(a) < Index(b); });
  return out;
}

std::string NodesPhrase(const std::vector<std::string>& nodes) {
  if (nodes.size() == 2) return nodes[0] + " and " + nodes[1];
  return FoldHostlist(nodes);
}

nlohmann::json SubnetMtusOf(const RunData& d) {
  nlohmann::json out = nlohmann::json::object();
  for (const StageSpec* spec : StageSpecs()) {
    if (!spec->subnet_mtus) continue;
    out.update(spec->subnet_mtus(JsonMember(d.run.meta, spec->name)));
  }
  return out;
}

}  // namespace analysis

namespace {

using analysis::NodeOrder;
using analysis::NodesPhrase;
using nlohmann::json;

int KindRank(const std::string& kind) {
  static const char* kOrder[] = {"unreachable",
                                 "auth-failed",
                                 "host-key",
                                 "agent-failed",
                                 "unhealthy",
                                 "link-down",
                                 "address-missing",
                                 "wrong-prefix",
                                 "wrong-subnet",
                                 "duplicate-address",
                                 "mtu",
                                 "firewall",
                                 "hang",
                                 "bad-node",
                                 "port-blocked",
                                 "widespread",
                                 "bad-link",
                                 "one-way",
                                 "wrong-host",
                                 "node-fail",
                                 "bandwidth-outlier",
                                 "incompatible",
                                 "pin-mismatch",
                                 "odd-version",
                                 "in-use",
                                 "untested",
                                 "flaky",
                                 "warning"};
  for (size_t i = 0; i < std::size(kOrder); ++i) {
    if (kind == kOrder[i]) return static_cast<int>(i);
  }
  return static_cast<int>(std::size(kOrder));
}

// Node results grouped by a key, nodes in run order within a group and
// groups in the order first seen.
template <typename Key>
struct Groups {
  std::vector<Key> order;
  std::map<Key, std::vector<const NodeResult*>> members;
  void Add(const Key& k, const NodeResult* r) {
    auto [it, fresh] = members.try_emplace(k);
    if (fresh) order.push_back(k);
    it->second.push_back(r);
  }
};

std::vector<std::string> NodesOf(const std::vector<const NodeResult*>& rs, const NodeOrder& order) {
  std::set<std::string> s;
  for (const auto* r : rs) s.insert(r->node);
  return order.Sorted(s);
}

json MessagesByNode(const std::vector<const NodeResult*>& rs) {
  json m = json::object();
  for (const auto* r : rs) m[r->node] = r->message;
  return m;
}

struct ConnectKind {
  const char* value;  // ErrorKindName of the failure, as stored in value
  const char* kind;
  const char* what;  // "<nodes> <what>"
  const char* next;  // "<verb> <nodes> ..." with {} for the nodes
};
const ConnectKind kConnectKinds[] = {
    {"unreachable", "unreachable", "cannot be reached over SSH",
     "check that {} is up and answers SSH on its address (ping, ssh -v)"},
    {"auth-failed", "auth-failed", "refused our SSH credentials",
     "check the SSH user and key for {} (ssh-agent, the inventory's identity)"},
    {"host-key-mismatch", "host-key", "presented a host key that does not match known_hosts",
     "if {} was reinstalled, verify its new key out of band and replace the "
     "old one (ssh-keygen -R); otherwise treat it as an impostor"},
    {"timeout", "hang", "did not answer in time while the agent started",
     "log in to {} and look for what stalls (load, a hung mount, a full disk)"},
};
// Under transport = "slurm" Slurm launches the agents; no ssh is involved.
const ConnectKind kSlurmConnectKinds[] = {
    {"unreachable", "unreachable", "cannot be reached by Slurm",
     "check {} in Slurm (scontrol show node; is its slurmd running?)"},
    {"timeout", "hang", "did not dial back in time after srun started its agent",
     "check {}'s slurmd log and whether it reaches this machine's dial-back address "
     "(run meta launcher.dial_back)"},
    {"launcher-refused", "launcher-refused", "could not be launched: Slurm refused the request",
     "read Slurm's message in the result and fix the allocation or the [slurm] settings"},
};
const ConnectKind kOtherConnect = {
    "", "agent-failed", "could not start the agent",
    "run the agent by hand on {} (clustercheck-agent --version) and read its "
    "error"};

std::string Fill(const std::string& tmpl, const std::string& nodes) {
  std::string out = tmpl;
  if (auto p = out.find("{}"); p != std::string::npos) out.replace(p, 2, nodes);
  return out;
}

void ConnectVerdicts(const RunData& d, const NodeOrder& order, std::vector<Verdict>& out) {
  Groups<std::string> g;
  for (const auto& r : d.node_results) {
    if (r.stage != "connect" || r.check != "agent") continue;
    if (r.outcome == Outcome::kPass || r.outcome == Outcome::kSkip) continue;
    g.Add(r.value, &r);
  }
  for (const auto& value : g.order) {
    const auto& rs = g.members[value];
    const ConnectKind* ck = &kOtherConnect;
    for (const auto& k : kConnectKinds) {
      if (value == k.value) ck = &k;
    }
    if (JsonString(d.run.meta, "transport") == "slurm") {
      for (const auto& k : kSlurmConnectKinds) {
        if (value == k.value) ck = &k;
      }
    }
    Verdict v;
    v.kind = ck->kind;
    v.stage = "connect";
    v.check = "agent";
    v.severity = Outcome::kPass;
    for (const auto* r : rs) v.severity = Worse(v.severity, r->outcome);
    v.nodes = NodesOf(rs, order);
    std::string who = NodesPhrase(v.nodes);
    v.summary = who + " " + ck->what;
    // The operator's first question is "why": one node's own message, the
    // common one, or the first as an example (all are in the evidence).
    bool same = std::all_of(rs.begin(), rs.end(),
                            [&](const NodeResult* r) { return r->message == rs.front()->message; });
    if (rs.size() == 1 || same) {
      v.summary += ": " + rs.front()->message;
    } else {
      v.summary += " (e.g. " + rs.front()->node + ": " + rs.front()->message + ")";
    }
    v.evidence = {{"error", value}, {"messages", MessagesByNode(rs)}};
    v.next_step = Fill(ck->next, who);
    out.push_back(std::move(v));
  }
}

// The next step the results' own evidence names (verdict_next_step.h), each for
// its node; "" when none does.
std::string OwnNextSteps(const std::vector<const NodeResult*>& rs, const json& subnet_mtu) {
  std::vector<std::string> steps;
  for (const auto* r : rs) steps.push_back(NextStepFromEvidence(r->evidence, r->node, subnet_mtu));
  return JoinSteps(steps);
}

std::string NodeNextStep(const NodeResult& r, const std::string& who) {
  const StageSpec* spec = FindStageSpec(r.stage);
  if (spec && spec->node_fail_next_step) return spec->node_fail_next_step(r, who);
  return "look at " + r.stage + "/" + r.check + " on " + who;
}

// A stage that judges its node results itself leaves the generic node
// rules only its errors (StageSpec::node_verdicts).
bool JudgedByItsStage(const NodeResult& r) {
  const StageSpec* spec = FindStageSpec(r.stage);
  return spec && spec->node_verdicts && r.outcome != Outcome::kError;
}

void StageNodeVerdicts(const RunData& d, const NodeOrder& order, std::vector<Verdict>& out) {
  for (const StageSpec* spec : StageSpecs()) {
    if (spec->node_verdicts) spec->node_verdicts(d, order, out);
  }
}

// Lists the unconfirmed results among `rs` for MarkUnconfirmed.
void NoteUnconfirmed(const std::vector<const NodeResult*>& rs, Verdict& v) {
  json list = json::array();
  for (const auto* r : rs) {
    std::string why = analysis::UnconfirmedWhy(r->evidence);
    if (!why.empty()) list.push_back({{"node", r->node}, {"why", why}});
  }
  if (list.empty()) return;
  v.evidence["unconfirmed"] = list;
  v.evidence["results_judged"] = rs.size();
}

// Hangs of node checks (connect hangs are connect verdicts), failing node
// checks outside connect and the stages that judge their own, and checks
// that could not be tested.
void NodeCheckVerdicts(const RunData& d, const NodeOrder& order, std::vector<Verdict>& out) {
  const json subnet_mtu = analysis::SubnetMtusOf(d);
  using Key = std::tuple<std::string, std::string, std::string, Outcome, std::string>;
  Groups<Key> g;
  for (const auto& r : d.node_results) {
    if (r.stage == "connect" && r.check == "agent") continue;
    if (JudgedByItsStage(r)) continue;
    if (r.outcome == Outcome::kPass || r.outcome == Outcome::kSkip) continue;
    if (analysis::ConfirmationOf(r.evidence) == kFlaky) continue;  // a flaky verdict
    // Hangs and errors group per check; failures also by what the node has.
    bool by_value = r.outcome == Outcome::kFail || r.outcome == Outcome::kWarn;
    g.Add({r.stage, r.check, by_value ? r.value : "", r.outcome, by_value ? r.expected : ""}, &r);
  }
  for (const auto& key : g.order) {
    const auto& rs = g.members[key];
    const NodeResult& first = *rs.front();
    Verdict v;
    v.stage = first.stage;
    v.check = first.check;
    v.severity = first.outcome;
    v.nodes = NodesOf(rs, order);
    std::string who = NodesPhrase(v.nodes);
    std::string where = first.stage + "/" + first.check;
    v.evidence = {{"messages", MessagesByNode(rs)}};
    if (rs.size() == 1 && !first.evidence.empty()) v.evidence["details"] = first.evidence;
    switch (first.outcome) {
      case Outcome::kHang:
        v.kind = "hang";
        v.summary = where + " hung on " + who;
        v.next_step = "look at " + who + ": what blocks " + where +
                      " (dmesg for Xid, nvidia-smi, stuck processes); drain if it persists";
        break;
      case Outcome::kError:
        v.kind = "untested";
        v.summary = where + " could not be tested on " + who;
        v.next_step = "fix what stopped the test on " + who + ": " + first.message;
        break;
      case Outcome::kWarn:
        v.kind = "warning";
        v.summary = where + " on " + who;
        v.next_step = "review " + where + " on " + who;  // OwnNextSteps below wins
        break;
      default:
        v.kind = "node-fail";
        v.summary = where + " fails on " + who;
        if (!first.value.empty()) v.summary += ": " + first.value;
        if (!first.expected.empty()) v.summary += " (expected " + first.expected + ")";
        v.next_step = NodeNextStep(first, who);  // OwnNextSteps below wins
        break;
    }
    // Several nodes with the same message (a crippling NCCL_IB_DISABLE=1
    // set everywhere) say it once; different messages stay in evidence.
    bool same = std::all_of(rs.begin(), rs.end(),
                            [&](const NodeResult* r) { return r->message == first.message; });
    if (same && !first.message.empty() && first.outcome != Outcome::kError) {
      v.summary += ": " + first.message;
    }
    std::string own = OwnNextSteps(rs, subnet_mtu);
    if (!own.empty()) v.next_step = own;
    NoteUnconfirmed(rs, v);
    out.push_back(std::move(v));
  }
}

// A stage's own verdicts are taken as they are (their nodes in run
// order); returns the stages that attributed their own pair failures. A
// node cause that names no pair (nics: node4's address has the wrong
// prefix) attributes none: that stage's pairs still go to the pair rules.
std::set<std::string> StageVerdicts(const RunData& d, const NodeOrder& order,
                                    std::vector<Verdict>& out) {
  std::set<std::string> stages;
  for (const Verdict& stored : d.verdicts) {
    if (stored.cause != CauseScope::kNode || !stored.pairs.empty()) stages.insert(stored.stage);
    Verdict v = stored;
    v.nodes = order.Sorted(std::set<std::string>(stored.nodes.begin(), stored.nodes.end()));
    out.push_back(std::move(v));
  }
  return stages;
}

// The stages that tested node pairs in this run.
std::set<std::string> PairStages(const RunData& d) {
  std::set<std::string> out;
  for (const auto& r : d.pair_results) out.insert(r.stage);
  for (const auto& g : d.routine_pairs.groups()) out.insert(g.stage);
  return out;
}

}  // namespace

namespace analysis {

void AppendTo(json& evidence, const char* key, json item) {
  // A stage's stored evidence may be of any shape: what is not an object
  // is kept under "details", a member of another shape under key + "_stored".
  if (!evidence.is_object()) evidence = json{{"details", std::move(evidence)}};
  if (evidence.contains(key) && !evidence[key].is_array()) {
    evidence[std::string(key) + "_stored"] = std::move(evidence[key]);
    evidence.erase(key);
  }
  evidence[key].push_back(std::move(item));
}

}  // namespace analysis

namespace {

// A failing node check of a node that is also a bad node of the same
// stage (nics: ib0 down, and it fails with every peer) is one finding:
// the node check becomes the bad node's evidence.
void MergeIntoBadNodes(std::vector<Verdict>& vs) {
  std::vector<Verdict> kept;
  for (auto& v : vs) {
    if (v.kind == "node-fail" && v.nodes.size() == 1) {
      auto bad = std::find_if(vs.begin(), vs.end(), [&](const Verdict& b) {
        return b.kind == "bad-node" && b.stage == v.stage && b.nodes == v.nodes;
      });
      if (bad != vs.end()) {
        analysis::AppendTo(bad->evidence, "node_checks", v.summary);
        continue;
      }
    }
    kept.push_back(v);
  }
  vs = std::move(kept);
}

}  // namespace

std::vector<Verdict> Analyze(const RunData& data, const AnalysisOptions& options) {
  NodeOrder order(data);
  std::vector<Verdict> out;
  ConnectVerdicts(data, order, out);
  NodeCheckVerdicts(data, order, out);
  StageNodeVerdicts(data, order, out);
  auto attributed = StageVerdicts(data, order, out);
  // A node or link with a cause tests nothing of its own: the pair rules
  // see the rest of the cluster (causes.h).
  analysis::CausedScope caused = analysis::ScopeOfCauses(out);
  std::map<std::string, size_t> hidden;
  std::optional<RunData> without;
  if (!caused.empty()) without = analysis::WithoutPairsOf(data, caused, &hidden);
  const RunData& pairs_data = without ? *without : data;
  analysis::AnalyzePairs(pairs_data, options, order, attributed, out);
  analysis::FlakyVerdicts(data, order, out);
  analysis::FoldWarningsIntoFlaky(out);
  MergeIntoBadNodes(out);
  analysis::FoldSymptomsAcrossStages(data, out);
  analysis::FoldIntoCauses(hidden, analysis::StageRanks(data), PairStages(data), out);
  analysis::SayWhatTheRestDid(data, out);
  analysis::MarkUnconfirmed(out);
  auto first_index = [&](const Verdict& v) {
    size_t i = SIZE_MAX;
    for (const auto& n : v.nodes) i = std::min(i, order.Index(n));
    return i;
  };
  std::stable_sort(out.begin(), out.end(), [&](const Verdict& a, const Verdict& b) {
    // A cause is named before every symptom and every other finding.
    bool ca = analysis::IsCause(a), cb = analysis::IsCause(b);
    if (ca != cb) return ca;
    int sa = OutcomeSeverity(a.severity), sb = OutcomeSeverity(b.severity);
    if (sa != sb) return sa > sb;
    int ka = KindRank(a.kind), kb = KindRank(b.kind);
    if (ka != kb) return ka < kb;
    return first_index(a) < first_index(b);
  });
  return out;
}

}  // namespace cc
