#include "reports/terminal.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "common/hostlist.h"

namespace cc {
namespace {

const char* Colour(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "\033[32m";
    case Outcome::kWarn: return "\033[33m";
    case Outcome::kSkip: return "\033[2m";
    default: return "\033[31;1m";
  }
}

std::string Upper(const char* s) {
  std::string o(s);
  std::transform(o.begin(), o.end(), o.begin(), ::toupper);
  return o;
}

std::string Tag(Outcome o, bool color) {
  std::string t = Upper(OutcomeName(o));
  t.resize(5, ' ');
  if (!color) return t;
  return std::string(Colour(o)) + t + "\033[0m";
}

// Problems fold by what they are: same stage, check, outcome and values
// on several nodes become one line with a node range.
struct Problem {
  Outcome outcome;
  std::string stage, check, value, expected;
  bool operator<(const Problem& o) const {
    return std::tie(o.outcome, stage, check, value, expected) <
           std::tie(outcome, o.stage, o.check, o.value, o.expected);
  }
};

}  // namespace

std::string VerdictLine(const RunData& d) {
  OutcomeCounts c = CountOutcomes(d);
  std::set<std::string> bad_nodes;
  for (const auto& r : d.node_results) {
    if (r.outcome == Outcome::kFail || r.outcome == Outcome::kHang) bad_nodes.insert(r.node);
  }
  std::set<std::string> bad_pairs;
  for (const auto& r : d.pair_results) {
    if (r.outcome == Outcome::kFail || r.outcome == Outcome::kHang) {
      bad_pairs.insert(r.src + ">" + r.dst);
    }
  }
  std::ostringstream o;
  if (d.run.status == "interrupted") {
    o << "INTERRUPTED: ";
  } else if (d.run.exit_code == 3) {
    o << "UNJUDGEABLE: ";
  } else if (c.bad() > 0) {
    o << "FAIL: ";
  } else if (c.error > 0 || c.warn > 0) {
    o << "PASS with warnings: ";
  } else {
    o << "PASS: ";
  }
  if (c.bad() > 0) {
    o << c.fail << " failed, " << c.hang << " hung";
    if (!bad_nodes.empty()) {
      o << " on " << FoldHostlist({bad_nodes.begin(), bad_nodes.end()});
    }
    if (!bad_pairs.empty()) o << "; " << bad_pairs.size() << " node pairs bad";
  } else {
    o << c.ToString();
  }
  return o.str();
}

std::string RenderTerminal(const RunData& d, const TerminalOptions& opt) {
  std::ostringstream o;
  auto names = d.NodeNames();
  o << VerdictLine(d) << "\n";
  o << "run " << d.run.id << " of " << (d.run.inventory_name.empty() ? d.run.inventory_path : d.run.inventory_name)
    << " (" << names.size() << " nodes), " << d.run.started_at
    << (d.run.status == "running" ? " [did not finish]" : "") << "\n";

  // What went wrong, worst first, folded by node ranges.
  std::map<Problem, std::pair<std::vector<std::string>, std::string>> problems;
  for (const auto& r : d.node_results) {
    if (r.outcome == Outcome::kPass) continue;
    Problem p{r.outcome, r.stage, r.check, r.value, r.expected};
    auto& entry = problems[p];
    entry.first.push_back(r.node);
    if (entry.second.empty()) entry.second = r.message;
  }
  if (!problems.empty()) o << "\n";
  for (const auto& [p, v] : problems) {
    o << "  " << Tag(p.outcome, opt.color) << " " << p.stage << "/" << p.check
      << "  " << FoldHostlist(v.first);
    if (v.first.size() == 1) {
      o << ": " << v.second;
    } else {
      o << ": " << v.second << (v.second.empty() ? "" : " (first of " + std::to_string(v.first.size()) + ")");
    }
    o << "\n";
  }
  // Pair problems: per stage/check, the bad pairs listed (capped).
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const PairResult*>> pair_problems;
  for (const auto& r : d.pair_results) {
    if (r.outcome == Outcome::kPass) continue;
    pair_problems[{r.stage, r.check, OutcomeName(r.outcome)}].push_back(&r);
  }
  for (const auto& [k, rs] : pair_problems) {
    o << "  " << Tag(rs.front()->outcome, opt.color) << " " << std::get<0>(k) << "/"
      << std::get<1>(k) << "  " << rs.size() << " pair(s):";
    size_t shown = 0;
    for (const PairResult* r : rs) {
      if (shown++ == 6) {
        o << " ...";
        break;
      }
      o << " " << r->src << "->" << r->dst << (r->state.empty() ? "" : "(" + r->state + ")");
    }
    o << "\n";
  }

  // Per stage: how many nodes/pairs, by outcome.
  o << "\nstages\n";
  std::vector<std::string> order;
  std::map<std::string, OutcomeCounts> per_stage;
  std::map<std::string, std::set<std::string>> stage_nodes;
  for (const auto& r : d.node_results) {
    if (!per_stage.count(r.stage)) order.push_back(r.stage);
    per_stage[r.stage].Add(r.outcome);
    stage_nodes[r.stage].insert(r.node);
  }
  std::map<std::string, size_t> stage_pairs;
  for (const auto& r : d.pair_results) {
    if (!per_stage.count(r.stage)) order.push_back(r.stage);
    per_stage[r.stage].Add(r.outcome);
    ++stage_pairs[r.stage];
  }
  for (const auto& s : order) {
    o << "  " << s;
    for (size_t i = s.size(); i < 9; ++i) o << ' ';
    if (stage_pairs[s]) {
      o << stage_pairs[s] << " pair checks";
    } else {
      o << stage_nodes[s].size() << " nodes";
    }
    o << ": " << per_stage[s].ToString() << "\n";
  }
  if (d.run.meta.contains("bytes_pushed")) {
    o << "  agent pushed: " << d.run.meta["bytes_pushed"].get<long long>() << " bytes\n";
  }
  if (d.run.meta.contains("warnings")) {
    for (const auto& w : d.run.meta["warnings"]) o << "  warning: " << w.get<std::string>() << "\n";
  }
  if (!opt.db_path.empty()) {
    o << "\nstored as run " << d.run.id << " in " << opt.db_path
      << " (clustercheck report " << d.run.id << ")\n";
  }
  return o.str();
}

}  // namespace cc
