#include "reports/pair_matrix.h"

#include <algorithm>
#include <bit>
#include <map>
#include <set>
#include <tuple>

#include "common/hostlist.h"
#include "orchestrator/stages/stages.h"

namespace cc {
namespace {

// What the results of one cell (sender, receiver) of a check add up to.
struct RawCell {
  int tested = 0;
  Outcome worse = Outcome::kPass;      // Worse() of its outcomes
  Outcome worst = Outcome::kPass;      // the first of the highest severity
  const std::string* state = nullptr;  // that one's state
  unsigned seen = 0;                   // outcomes seen, one bit each
  std::optional<double> min_value, max_value;

  void Add(Outcome o, const std::string& s, std::optional<double> value) {
    worse = Worse(worse, o);
    if (tested == 0 || OutcomeSeverity(o) > OutcomeSeverity(worst)) {
      worst = o;
      state = &s;
    }
    ++tested;
    seen |= 1u << static_cast<unsigned>(o);
    if (value) {
      min_value = min_value ? std::min(*min_value, *value) : *value;
      max_value = max_value ? std::max(*max_value, *value) : *value;
    }
  }
};

// The results of one check, addressed by node index: cells[a * n + b].
struct Raw {
  std::string stage, check, unit;
  bool directed = false;
  bool has_values = false;
  std::vector<std::string> nodes;
  std::vector<RawCell> cells;
  OutcomeCounts counts;
  const RawCell& cell(size_t a, size_t b) const { return cells[a * nodes.size() + b]; }
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

Raw CollectCheck(const PairsByCheck& by_check, size_t index, const RoutinePairs& routine,
                 const std::map<std::string, size_t>& run_order) {
  auto rank = [&](const std::string& n) {
    auto it = run_order.find(n);
    return it == run_order.end() ? run_order.size() : it->second;
  };
  Raw raw;
  raw.stage = by_check.checks[index].first;
  raw.check = by_check.checks[index].second;
  std::set<std::string> names;
  auto each = [&](auto f) { by_check.ForEachResult(index, routine, f); };
  each([&](const std::string& src, const std::string& dst, Outcome o, const std::string&,
           std::optional<double> value, const std::string& unit) {
    names.insert(src);
    names.insert(dst);
    raw.counts.Add(o);
    if (value) {
      raw.has_values = true;
      raw.unit = unit;
    }
  });
  raw.nodes.assign(names.begin(), names.end());
  std::stable_sort(raw.nodes.begin(), raw.nodes.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  std::map<std::string, size_t> at;
  for (size_t k = 0; k < raw.nodes.size(); ++k) at[raw.nodes[k]] = k;
  size_t n = raw.nodes.size();
  std::vector<bool> dirs(n * n, false);
  each([&](const std::string& src, const std::string& dst, Outcome, const std::string&,
           std::optional<double>, const std::string&) { dirs[at[src] * n + at[dst]] = true; });
  for (size_t s = 0; s < n && !raw.directed; ++s) {
    for (size_t t = 0; t < n; ++t) {
      if (s != t && dirs[s * n + t] && dirs[t * n + s]) raw.directed = true;
    }
  }
  raw.directed = raw.directed || PairsDirected(raw.stage);
  raw.cells.assign(n * n, RawCell{});
  each([&](const std::string& src, const std::string& dst, Outcome o, const std::string& state,
           std::optional<double> value, const std::string&) {
    size_t s = at[src], t = at[dst];
    raw.cells[s * n + t].Add(o, state, value);
    if (!raw.directed && s != t) raw.cells[t * n + s].Add(o, state, value);
  });
  return raw;
}

char RawChar(const Raw& raw, size_t a, size_t b) {
  const RawCell& c = raw.cell(a, b);
  return c.tested == 0 ? ' ' : OutcomeChar(c.worse);
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
  std::vector<std::vector<unsigned>> seen(k, std::vector<unsigned>(k, 0));
  for (size_t a = 0; a < n; ++a) {
    for (size_t b = 0; b < n; ++b) {
      const RawCell& r = raw.cell(a, b);
      if (r.tested == 0) continue;
      MatrixCell& c = m.cells[row[a]][row[b]];
      if (c.tested == 0 || OutcomeSeverity(r.worst) > OutcomeSeverity(c.worst)) {
        c.worst = r.worst;
        c.state = *r.state;
      }
      c.tested += r.tested;
      seen[row[a]][row[b]] |= r.seen;
      if (r.min_value)
        c.min_value = c.min_value ? std::min(*c.min_value, *r.min_value) : *r.min_value;
      if (r.max_value)
        c.max_value = c.max_value ? std::max(*c.max_value, *r.max_value) : *r.max_value;
    }
  }
  for (size_t a = 0; a < k; ++a) {
    for (size_t b = 0; b < k; ++b) m.cells[a][b].mixed = std::popcount(seen[a][b]) > 1;
  }
  return m;
}

}  // namespace

char CellChar(const MatrixCell& cell) { return cell.tested == 0 ? ' ' : OutcomeChar(cell.worst); }

// One check at a time: a 256-node check has 65,280 cells.
std::vector<PairMatrix> BuildPairMatrices(const RunData& data, const MatrixOptions& options) {
  std::map<std::string, size_t> run_order;
  for (const auto& n : data.NodeNames()) run_order.emplace(n, run_order.size());
  const PairsByCheck by_check(data);
  std::vector<PairMatrix> out;
  for (size_t i = 0; i < by_check.checks.size(); ++i) {
    out.push_back(Build(CollectCheck(by_check, i, data.routine_pairs, run_order), options.fold));
  }
  return out;
}

}  // namespace cc
