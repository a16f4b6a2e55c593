#include "reports/pair_matrix.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "common/hostlist.h"
#include "orchestrator/stages/stages.h"

namespace cc {
namespace {

// The results of one check, addressed by node index.
struct Raw {
  std::string stage, check, unit;
  bool directed = false;
  bool has_values = false;
  std::vector<std::string> nodes;
  std::map<std::pair<size_t, size_t>, std::vector<const PairResult*>> cells;
  OutcomeCounts counts;
};

char OutcomeChar(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return '.';
    case Outcome::kWarn:
      return '~';
    case Outcome::kFail:
      return 'X';
    case Outcome::kHang:
      return 'H';
    case Outcome::kSkip:
      return '-';
    case Outcome::kError:
      return '?';
  }
  return '?';
}

std::vector<Raw> Collect(const RunData& d) {
  std::map<std::string, size_t> run_order;
  for (const auto& n : d.NodeNames()) run_order.emplace(n, run_order.size());
  auto rank = [&](const std::string& n) {
    auto it = run_order.find(n);
    return it == run_order.end() ? run_order.size() : it->second;
  };
  std::vector<Raw> out;
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::vector<std::vector<const PairResult*>> results;
  for (const auto& r : d.pair_results) {
    std::string check = MatrixCheck(r);
    auto [it, fresh] = index.try_emplace({r.stage, check}, out.size());
    if (fresh) {
      Raw raw;
      raw.stage = r.stage;
      raw.check = check;
      out.push_back(std::move(raw));
      results.emplace_back();
    }
    results[it->second].push_back(&r);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    Raw& raw = out[i];
    std::set<std::string> names;
    std::set<std::pair<std::string, std::string>> dirs;
    for (const auto* r : results[i]) {
      names.insert(r->src);
      names.insert(r->dst);
      dirs.insert({r->src, r->dst});
      raw.counts.Add(r->outcome);
      if (r->value) {
        raw.has_values = true;
        raw.unit = r->unit;
      }
    }
    raw.nodes.assign(names.begin(), names.end());
    std::stable_sort(raw.nodes.begin(), raw.nodes.end(),
                     [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
    for (const auto& [s, t] : dirs) {
      if (s != t && dirs.count({t, s})) raw.directed = true;
    }
    raw.directed = raw.directed || PairsDirected(raw.stage);
    std::map<std::string, size_t> at;
    for (size_t k = 0; k < raw.nodes.size(); ++k) at[raw.nodes[k]] = k;
    for (const auto* r : results[i]) {
      size_t s = at[r->src], t = at[r->dst];
      raw.cells[{s, t}].push_back(r);
      if (!raw.directed && s != t) raw.cells[{t, s}].push_back(r);
    }
  }
  return out;
}

char RawChar(const Raw& raw, size_t a, size_t b) {
  auto it = raw.cells.find({a, b});
  if (it == raw.cells.end()) return ' ';
  Outcome w = Outcome::kPass;
  for (const auto* r : it->second) w = Worse(w, r->outcome);
  return OutcomeChar(w);
}

// Partition refinement: nodes stay together while, towards every class,
// they see the same set of (outgoing, incoming) cell characters.
std::vector<size_t> Refine(const Raw& raw) {
  size_t n = raw.nodes.size();
  std::vector<std::vector<char>> ch(n, std::vector<char>(n, ' '));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) ch[a][b] = RawChar(raw, a, b);
  }
  std::vector<size_t> cls(n, 0);
  size_t classes = 1;
  for (;;) {
    using Sig = std::pair<size_t, std::set<std::tuple<size_t, char, char>>>;
    std::map<Sig, size_t> ids;
    std::vector<size_t> next(n);
    for (size_t a = 0; a < n; ++a) {
      Sig sig{cls[a], {}};
      for (size_t b = 0; b < n; ++b) {
        if (b != a) sig.second.insert({cls[b], ch[a][b], ch[b][a]});
      }
      auto [it, fresh] = ids.try_emplace(std::move(sig), ids.size());
      next[a] = it->second;
    }
    cls = std::move(next);
    if (ids.size() == classes) break;
    classes = ids.size();
  }
  return cls;
}

PairMatrix Build(const Raw& raw, bool fold) {
  PairMatrix m;
  m.stage = raw.stage;
  m.check = raw.check;
  m.unit = raw.unit;
  m.directed = raw.directed;
  m.has_values = raw.has_values;
  m.counts = raw.counts;
  size_t n = raw.nodes.size();
  std::vector<size_t> cls(n);
  if (fold) {
    cls = Refine(raw);
  } else {
    for (size_t i = 0; i < n; ++i) cls[i] = i;
  }
  // Classes numbered by their first node, in run order.
  std::map<size_t, size_t> row_of;
  std::vector<size_t> row(n);
  for (size_t i = 0; i < n; ++i) {
    auto [it, fresh] = row_of.try_emplace(cls[i], m.members.size());
    if (fresh) m.members.emplace_back();
    m.members[it->second].push_back(raw.nodes[i]);
    row[i] = it->second;
  }
  for (const auto& mem : m.members) m.labels.push_back(FoldHostlist(mem));
  size_t k = m.members.size();
  m.cells.assign(k, std::vector<MatrixCell>(k));
  std::vector<std::vector<std::set<Outcome>>> seen(k, std::vector<std::set<Outcome>>(k));
  for (const auto& [ab, rs] : raw.cells) {
    MatrixCell& c = m.cells[row[ab.first]][row[ab.second]];
    for (const auto* r : rs) {
      if (c.tested == 0 || OutcomeSeverity(r->outcome) > OutcomeSeverity(c.worst)) {
        c.worst = r->outcome;
        c.state = r->state;
      }
      ++c.tested;
      seen[row[ab.first]][row[ab.second]].insert(r->outcome);
      if (r->value) {
        c.min_value = c.min_value ? std::min(*c.min_value, *r->value) : *r->value;
        c.max_value = c.max_value ? std::max(*c.max_value, *r->value) : *r->value;
      }
    }
  }
  for (size_t a = 0; a < k; ++a) {
    for (size_t b = 0; b < k; ++b) m.cells[a][b].mixed = seen[a][b].size() > 1;
  }
  return m;
}

}  // namespace

char CellChar(const MatrixCell& cell) { return cell.tested == 0 ? ' ' : OutcomeChar(cell.worst); }

std::vector<PairMatrix> BuildPairMatrices(const RunData& data, const MatrixOptions& options) {
  std::vector<PairMatrix> out;
  for (const auto& raw : Collect(data)) out.push_back(Build(raw, options.fold));
  return out;
}

}  // namespace cc
