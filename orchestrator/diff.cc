#include "orchestrator/diff.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "orchestrator/stages/stages.h"

namespace cc {
namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string>;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

template <typename R>
void KeepWorst(std::map<Key, const R*>& m, const Key& k, const R& r) {
  auto [it, fresh] = m.try_emplace(k, &r);
  if (!fresh && OutcomeSeverity(r.outcome) > OutcomeSeverity(it->second->outcome)) it->second = &r;
}

std::map<Key, const NodeResult*> NodeChecks(const RunData& d) {
  std::map<Key, const NodeResult*> m;
  for (const auto& r : d.node_results) {
    KeepWorst(m, {r.node, r.stage, r.check, ""}, r);
  }
  return m;
}

// Every pair result of the run, the routine ones materialized: a diff
// compares each pair of one run with the same pair of the other.
std::vector<PairResult> AllPairResults(const RunData& d) {
  std::vector<PairResult> out;
  out.reserve(d.PairResultCount());
  d.ForEachPairResult([&](const PairResult& r) { out.push_back(r); });
  return out;
}

std::map<Key, const PairResult*> Pairs(const std::vector<PairResult>& rs,
                                       std::set<std::pair<std::string, std::string>>& directed) {
  std::map<Key, const PairResult*> m;
  for (const auto& r : rs) KeepWorst(m, {r.stage, r.check, r.src, r.dst}, r);
  for (const auto& [k, r] : m) {
    auto& [stage, check, src, dst] = k;
    if (PairsDirected(stage) || m.count({stage, check, dst, src})) directed.insert({stage, check});
  }
  return m;
}

}  // namespace

std::string DiffEntry::ToString() const {
  std::string s = pair ? stage + " " + check + " " + src + (directed ? " to " : " <-> ") + dst
                       : node + " " + stage + "/" + check;
  s += std::string(": ") + OutcomeName(from) + " -> " + OutcomeName(to);
  if (from == to && from_value && to_value) {
    s = (pair ? stage + " " + check + " " + src + (directed ? " to " : " <-> ") + dst : node) +
        ": " + Num(*from_value) + " -> " + Num(*to_value) + " " + unit;
    double rel = *from_value != 0 ? (*to_value - *from_value) / *from_value : 0;
    s += " (" + std::string(rel >= 0 ? "+" : "") +
         std::to_string(static_cast<int>(std::lround(100 * rel))) + "%)";
    return s;
  }
  if (!detail.empty()) s += " (" + detail + ")";
  return s;
}

RunDiff DiffRuns(const RunData& a, const RunData& b, const DiffOptions& o) {
  RunDiff diff;
  diff.a = a.run.id;
  diff.b = b.run.id;
  auto na = a.NodeNames(), nb = b.NodeNames();
  std::set<std::string> sa(na.begin(), na.end()), sb(nb.begin(), nb.end());
  for (const auto& n : nb) {
    if (!sa.count(n)) diff.nodes_added.push_back(n);
  }
  for (const auto& n : na) {
    if (!sb.count(n)) diff.nodes_removed.push_back(n);
  }

  auto nca = NodeChecks(a), ncb = NodeChecks(b);
  // In B's order, so the report follows the newer run.
  for (const auto& r : b.node_results) {
    Key k{r.node, r.stage, r.check, ""};
    if (ncb[k] != &r) continue;  // not the worst of its key
    auto it = nca.find(k);
    if (it == nca.end()) continue;
    const NodeResult& was = *it->second;
    DiffEntry e;
    e.stage = r.stage;
    e.check = r.check;
    e.node = r.node;
    e.from = was.outcome;
    e.to = r.outcome;
    e.detail = was.value != r.value ? was.value + " -> " + r.value : r.message;
    if (IsFailOrHang(r.outcome) && !IsFailOrHang(was.outcome)) diff.regressed.push_back(e);
    if (IsFailOrHang(was.outcome) && IsPassOrWarn(r.outcome)) diff.recovered.push_back(e);
  }

  std::set<std::pair<std::string, std::string>> directed;
  const std::vector<PairResult> all_a = AllPairResults(a), all_b = AllPairResults(b);
  auto pa = Pairs(all_a, directed), pb = Pairs(all_b, directed);
  for (const auto& r : all_b) {
    Key k{r.stage, r.check, r.src, r.dst};
    if (pb[k] != &r) continue;
    bool dir = directed.count({r.stage, r.check}) > 0;
    auto it = pa.find(k);
    if (it == pa.end() && !dir) it = pa.find({r.stage, r.check, r.dst, r.src});
    if (it == pa.end()) continue;
    const PairResult& was = *it->second;
    DiffEntry e;
    e.pair = true;
    e.directed = dir;
    e.stage = r.stage;
    e.check = r.check;
    e.src = r.src;
    e.dst = r.dst;
    e.from = was.outcome;
    e.to = r.outcome;
    e.from_value = was.value;
    e.to_value = r.value;
    e.unit = r.unit;
    e.detail = r.message.empty() ? r.state : r.message;
    if (IsFailOrHang(r.outcome) && !IsFailOrHang(was.outcome)) {
      diff.regressed.push_back(e);
    } else if (IsFailOrHang(was.outcome) && IsPassOrWarn(r.outcome)) {
      diff.recovered.push_back(e);
    } else if (IsPassOrWarn(was.outcome) && IsPassOrWarn(r.outcome) && was.value && r.value &&
               *was.value > 0 && was.unit == r.unit) {
      double rel = (*r.value - *was.value) / *was.value;
      e.to = e.from;  // same outcome class: ToString shows the values
      if (rel < -o.tolerance) diff.slower.push_back(e);
      if (rel > o.tolerance) diff.faster.push_back(e);
    }
  }
  return diff;
}

std::string RenderDiff(const RunDiff& d) {
  std::string s = "run " + std::to_string(d.a) + " -> run " + std::to_string(d.b) + ": " +
                  std::to_string(d.regressed.size()) + " regressed, " +
                  std::to_string(d.recovered.size()) + " recovered, " +
                  std::to_string(d.slower.size()) + " slower, " + std::to_string(d.faster.size()) +
                  " faster, " + std::to_string(d.nodes_added.size()) + " nodes added, " +
                  std::to_string(d.nodes_removed.size()) + " nodes removed\n";
  auto section = [&](const char* title, const std::vector<DiffEntry>& es) {
    if (es.empty()) return;
    s += std::string(title) + "\n";
    for (const auto& e : es) s += "  " + e.ToString() + "\n";
  };
  section("regressed", d.regressed);
  section("recovered", d.recovered);
  section("slower", d.slower);
  section("faster", d.faster);
  auto nodes = [&](const char* title, const std::vector<std::string>& ns) {
    if (ns.empty()) return;
    s += std::string(title) + "\n";
    for (const auto& n : ns) s += "  " + n + "\n";
  };
  nodes("nodes added", d.nodes_added);
  nodes("nodes removed", d.nodes_removed);
  return s;
}

nlohmann::json DiffToJson(const RunDiff& d) {
  auto list = [](const std::vector<DiffEntry>& es) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& e : es) {
      nlohmann::json j{
          {"stage", e.stage},        {"check", e.check},   {"from", OutcomeName(e.from)},
          {"to", OutcomeName(e.to)}, {"detail", e.detail}, {"text", e.ToString()}};
      if (e.pair) {
        j["src"] = e.src;
        j["dst"] = e.dst;
      } else {
        j["node"] = e.node;
      }
      if (e.from_value) j["from_value"] = *e.from_value;
      if (e.to_value) j["to_value"] = *e.to_value;
      if (!e.unit.empty()) j["unit"] = e.unit;
      a.push_back(j);
    }
    return a;
  };
  return {{"a", d.a},
          {"b", d.b},
          {"regressed", list(d.regressed)},
          {"recovered", list(d.recovered)},
          {"slower", list(d.slower)},
          {"faster", list(d.faster)},
          {"nodes_added", d.nodes_added},
          {"nodes_removed", d.nodes_removed}};
}

}  // namespace cc
