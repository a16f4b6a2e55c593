#include "orchestrator/store/routine_pairs.h"

namespace cc {
namespace {

// The evidence "speed" object, or nullptr.
const nlohmann::json* SpeedOf(const PairResult& r) {
  if (!r.evidence.is_object()) return nullptr;
  auto it = r.evidence.find("speed");
  return it != r.evidence.end() && it->is_object() ? &*it : nullptr;
}

std::string GroupKey(const RoutinePairs::Group& g) {
  std::string key;
  for (const std::string* part :
       {&g.stage, &g.check, &g.matrix_check, &g.state, &g.unit, &g.message}) {
    key += *part;
    key += '\0';
  }
  key += OutcomeName(g.outcome);
  key += g.speed_judged ? "\1" : "\0";
  return key;
}

}  // namespace

bool IsRoutinePairResult(const PairResult& r) {
  if (r.outcome != Outcome::kPass && r.outcome != Outcome::kSkip) return false;
  if (r.evidence.is_object() && r.evidence.contains("confirmation")) return false;
  const nlohmann::json* speed = SpeedOf(r);
  return !speed || !speed->value("slow", false);
}

std::optional<uint16_t> RoutinePairs::NodeId(const std::string& name) {
  auto it = node_ids_.find(name);
  if (it != node_ids_.end()) return it->second;
  if (nodes_.size() > UINT16_MAX) return std::nullopt;
  auto id = static_cast<uint16_t>(nodes_.size());
  nodes_.push_back(name);
  node_ids_.emplace(name, id);
  return id;
}

bool RoutinePairs::Add(const PairResult& r, const std::string& matrix_check) {
  std::optional<uint16_t> src = NodeId(r.src), dst = NodeId(r.dst);
  if (!src || !dst) return false;
  Group g{r.stage, r.check, matrix_check,          r.outcome,
          r.state, r.unit,  SpeedOf(r) != nullptr, r.outcome == Outcome::kSkip ? r.message : ""};
  auto [it, fresh] = group_ids_.try_emplace(GroupKey(g), static_cast<uint32_t>(groups_.size()));
  if (fresh) groups_.push_back(std::move(g));
  Entry e{it->second, *src, *dst, kNoValue};
  if (r.value) {
    e.value = static_cast<uint32_t>(values_.size());
    values_.push_back(*r.value);
  }
  entries_.push_back(e);
  if (r.at > last_at_) last_at_ = r.at;
  return true;
}

void RoutinePairs::Reserve(size_t results, size_t values) {
  entries_.reserve(results);
  values_.reserve(values);
}

std::optional<double> RoutinePairs::value(const Entry& e) const {
  if (e.value == kNoValue) return std::nullopt;
  return values_[e.value];
}

PairResult RoutinePairs::Materialize(const Entry& e) const {
  const Group& g = group(e);
  PairResult r;
  r.stage = g.stage;
  r.src = node(e.src);
  r.dst = node(e.dst);
  r.check = g.check;
  r.outcome = g.outcome;
  r.state = g.state;
  r.value = value(e);
  r.unit = g.unit;
  r.message = g.message;
  if (g.speed_judged) r.evidence = {{"speed", {{"slow", false}}}};
  return r;
}

RoutinePairs RoutinePairs::Without(const std::set<std::string>& nodes) const {
  RoutinePairs out = *this;
  std::vector<bool> gone(nodes_.size(), false);
  for (size_t i = 0; i < nodes_.size(); ++i) gone[i] = nodes.count(nodes_[i]) > 0;
  std::erase_if(out.entries_, [&](const Entry& e) { return gone[e.src] || gone[e.dst]; });
  return out;
}

}  // namespace cc
