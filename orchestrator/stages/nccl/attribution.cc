#include "orchestrator/stages/nccl/attribution.h"

#include <algorithm>
#include <optional>
#include <set>

#include "common/hostlist.h"

namespace cc {
namespace {

enum class State { kUnknown, kGood, kBad };

State StateOf(Outcome o) {
  if (IsPassOrWarn(o)) return State::kGood;
  if (IsFailOrHang(o)) return State::kBad;
  return State::kUnknown;
}

NodePair Key(const std::string& a, const std::string& b) {
  return a < b ? NodePair{a, b} : NodePair{b, a};
}

struct PairState {
  State state = State::kUnknown;
  Outcome worst = Outcome::kPass;  // the worst broken outcome, if broken
};

struct NodeView {
  std::set<std::string> failed;  // partners of broken pairs
  std::set<std::string> passed;  // partners of working pairs
  bool hung = false;
};

class Matrix {
 public:
  explicit Matrix(const AttributionInput& in) {
    for (const auto& p : in.pairs) {
      if (p.a == p.b) continue;
      PairState& s = pairs_[Key(p.a, p.b)];
      State st = StateOf(p.outcome);
      if (st == State::kBad) {
        s.worst = s.state == State::kBad ? Worse(s.worst, p.outcome) : p.outcome;
        s.state = State::kBad;
      } else if (st == State::kGood && s.state == State::kUnknown) {
        s.state = State::kGood;
      }
    }
    for (const auto& [key, s] : pairs_) {
      if (s.state == State::kUnknown) continue;
      auto& va = nodes_[key.first];
      auto& vb = nodes_[key.second];
      if (s.state == State::kBad) {
        va.failed.insert(key.second);
        vb.failed.insert(key.first);
        if (s.worst == Outcome::kHang) va.hung = vb.hung = true;
      } else {
        va.passed.insert(key.second);
        vb.passed.insert(key.first);
      }
    }
  }
  const std::map<NodePair, PairState>& pairs() const { return pairs_; }
  const NodeView& node(const std::string& n) const {
    static const NodeView kEmpty;
    auto it = nodes_.find(n);
    return it == nodes_.end() ? kEmpty : it->second;
  }
  bool Tested(const std::string& a, const std::string& b) const {
    auto it = pairs_.find(Key(a, b));
    return it != pairs_.end() && it->second.state != State::kUnknown;
  }

 private:
  std::map<NodePair, PairState> pairs_;
  std::map<std::string, NodeView> nodes_;
};

std::vector<std::string> Sorted(const std::set<std::string>& s) { return {s.begin(), s.end()}; }

std::vector<std::string> AllNodes(const AttributionInput& in) {
  std::set<std::string> all(in.nodes.begin(), in.nodes.end());
  for (const auto& p : in.pairs) all.insert({p.a, p.b});
  for (const auto& [n, o] : in.intra_node) all.insert(n);
  return Sorted(all);
}

std::optional<NodeBlame> JudgeNode(const std::string& n, const Matrix& m,
                                   const AttributionInput& in) {
  const NodeView& v = m.node(n);
  NodeBlame b{n, v.hung ? Outcome::kHang : Outcome::kFail, "", Sorted(v.failed), Sorted(v.passed)};
  auto intra = in.intra_node.find(n);
  if (intra != in.intra_node.end() && StateOf(intra->second) == State::kBad) {
    b.outcome = intra->second;
    b.reason = std::string("intra-node AllReduce: ") + OutcomeName(intra->second);
    return b;
  }
  size_t f = v.failed.size(), g = v.passed.size();
  if (f < 2 || f <= g) return std::nullopt;
  // Partners that work with someone else point at this node, not at
  // themselves: the edge X-P broke, yet P works.
  std::vector<std::string> cleared;
  for (const auto& p : v.failed) {
    if (!m.node(p).passed.empty()) cleared.push_back(p);
  }
  if (cleared.size() * 2 < f) return std::nullopt;
  b.reason = (g == 0 ? "fails with all " + std::to_string(f) + " partners ("
                     : "fails with " + std::to_string(f) + " of " + std::to_string(f + g) +
                           " partners (") +
             FoldHostlist(b.failed_with) + "); " + std::to_string(cleared.size()) +
             " of them pass with other nodes";
  return b;
}

}  // namespace

Attribution AttributeFailures(const AttributionInput& input) {
  Attribution out;
  Matrix m(input);
  std::set<std::string> bad;
  for (const auto& n : AllNodes(input)) {
    if (auto b = JudgeNode(n, m, input)) {
      bad.insert(n);
      out.bad_nodes.push_back(std::move(*b));
    }
  }
  std::set<std::string> suspects;
  for (const auto& [key, s] : m.pairs()) {
    if (s.state != State::kBad) continue;
    const auto& [a, b] = key;
    if (bad.count(a) || bad.count(b)) continue;  // explained by a bad node
    if (!m.node(a).passed.empty() && !m.node(b).passed.empty()) {
      out.bad_links.push_back(
          {a, b, s.worst, a + " and " + b + " fail together but each passes with others"});
    } else {
      out.unexplained.push_back(key);
      suspects.insert({a, b});
    }
  }
  out.suspects = Sorted(suspects);
  for (const auto& n : AllNodes(input)) {
    const NodeView& v = m.node(n);
    // Failures explained by a bad node or a bad link do not taint a node.
    if (bad.count(n) || suspects.count(n) || v.passed.empty()) continue;
    out.known_good.push_back(n);
  }
  return out;
}

std::vector<NodePair> NextProbesToIsolate(const AttributionInput& input,
                                          const Attribution& attribution) {
  Matrix m(input);
  std::vector<NodePair> probes;
  std::set<std::string> busy;
  for (const auto& s : attribution.suspects) {
    if (busy.count(s)) continue;
    for (const auto& g : attribution.known_good) {
      if (busy.count(g) || m.Tested(s, g)) continue;
      probes.emplace_back(s, g);
      busy.insert({s, g});
      break;
    }
  }
  return probes;
}

}  // namespace cc
