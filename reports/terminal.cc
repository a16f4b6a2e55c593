#include "reports/terminal.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "common/hostlist.h"
#include "orchestrator/analysis/causes.h"
#include "orchestrator/stages/stages.h"
#include "reports/pair_matrix.h"
#include "reports/read_errors.h"
#include "reports/retests.h"
#include "reports/unfinished_run.h"

namespace cc {
namespace {

const char* kReset = "\033[0m";

const char* Colour(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "\033[32m";
    case Outcome::kWarn:
      return "\033[33m";
    case Outcome::kSkip:
      return "\033[2m";
    case Outcome::kHang:
      return "\033[35;1m";
    case Outcome::kError:
      return "\033[33;1m";
    default:
      return "\033[31;1m";
  }
}

std::string Upper(const char* s) {
  std::string o(s);
  std::transform(o.begin(), o.end(), o.begin(), ::toupper);
  return o;
}

std::string Pad(std::string s, size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}

std::string Tag(Outcome o, bool color) {
  std::string t = Pad(Upper(OutcomeName(o)), 5);
  if (!color) return t;
  return std::string(Colour(o)) + t + kReset;
}

std::string Paint(char c, bool color) {
  if (!color || c == ' ') return std::string(1, c);
  Outcome o = c == '.'   ? Outcome::kPass
              : c == '~' ? Outcome::kWarn
              : c == 'H' ? Outcome::kHang
              : c == '-' ? Outcome::kSkip
              : c == '?' ? Outcome::kError
                         : Outcome::kFail;
  return std::string(Colour(o)) + c + kReset;
}

// Column keys: a-z, then A-Z; a matrix with more classes than that is
// too big for a terminal and is left to the HTML page.
constexpr size_t kMaxColumns = 52;
char ColumnKey(size_t i) {
  return i < 26 ? static_cast<char>('a' + i) : static_cast<char>('A' + i - 26);
}

void Errors(std::ostringstream& o, const std::vector<std::string>& lines) {
  for (const auto& line : lines) o << "  " << line << "\n";
}

void Verdicts(std::ostringstream& o, const RunData& d, const std::vector<Verdict>& vs, bool color) {
  if (vs.empty()) return;
  o << "\nverdicts, worst first\n";
  for (const auto& v : vs) {
    o << "  " << Tag(v.severity, color) << " " << Pad(v.kind, 17) << " " << v.summary << "\n";
    if (!v.next_step.empty()) o << Pad("", 26) << "-> " << v.next_step << "\n";
  }
  Errors(o, VerdictReadErrors(d, vs));
}

void Matrices(std::ostringstream& o, const RunData& d, const TerminalOptions& opt) {
  auto ms = BuildPairMatrices(d);
  if (ms.empty()) return;
  o << "\npair checks (row sends to column; . pass  ~ warn  X fail  H hang  - skip  ? error;\n"
       "a range is alike nodes, its own diagonal cell the pairs among them)\n";
  for (const auto& m : ms) {
    int total = m.counts.pass + m.counts.warn + m.counts.fail + m.counts.hang + m.counts.skip +
                m.counts.error;
    o << "  " << m.stage << " " << m.check << ": " << total << " results, " << m.counts.ToString();
    bool all_pass = total == m.counts.pass;
    if (all_pass && !opt.show_passes) {
      o << " on " << FoldHostlist([&] {
        std::vector<std::string> all;
        for (const auto& mem : m.members) all.insert(all.end(), mem.begin(), mem.end());
        return all;
      }())
        << "\n";
      continue;
    }
    o << "\n";
    if (m.labels.size() > kMaxColumns) {
      o << "    (" << m.labels.size() << " distinct rows: see report --html)\n";
      continue;
    }
    o << RenderMatrixText(m, opt.color) << "\n";
  }
}

void StageCounts(std::ostringstream& o, const RunData& d) {
  o << "\nstages\n";
  std::vector<std::string> order;
  std::map<std::string, OutcomeCounts> per_stage;
  std::map<std::string, std::set<std::string>> stage_nodes;
  std::map<std::string, size_t> stage_pairs;
  for (const auto& r : d.node_results) {
    if (!per_stage.count(r.stage)) order.push_back(r.stage);
    per_stage[r.stage].Add(r.outcome);
    if (r.node != "*") stage_nodes[r.stage].insert(r.node);
  }
  auto add_pair = [&](const std::string& stage, Outcome o) {
    if (!per_stage.count(stage)) order.push_back(stage);
    per_stage[stage].Add(o);
    ++stage_pairs[stage];
  };
  for (const auto& r : d.pair_results) add_pair(r.stage, r.outcome);
  const RoutinePairs& routine = d.routine_pairs;
  for (const auto& e : routine.entries())
    add_pair(routine.group(e).stage, routine.group(e).outcome);
  std::vector<StageRetests> retests = RetestsOf(d);
  // Stages that only retested (no results of their own) still get a row.
  for (const auto& r : retests) {
    if (!per_stage.count(r.stage)) order.push_back(r.stage);
  }
  for (const auto& s : order) {
    o << "  " << Pad(s, 9);
    std::string what = std::to_string(stage_nodes[s].size()) + " nodes";
    if (stage_pairs[s]) {
      what += std::string(stage_nodes[s].empty() ? "" : " +") + " " +
              std::to_string(stage_pairs[s]) + " pair results";
      if (stage_nodes[s].empty()) what = std::to_string(stage_pairs[s]) + " pair results";
    }
    o << Pad(what, 28) << per_stage[s].ToString() << "\n";
    for (const auto& r : retests) {
      if (r.stage == s) o << "  " << Pad("", 9) << "retests: " << RetestLine(r) << "\n";
    }
  }
  JsonProblems meta;
  int64_t pushed = JsonInt(d.run.meta, "bytes_pushed", -1, &meta, 0);
  if (pushed >= 0) o << "  agent pushed: " << pushed << " bytes\n";
  // What each stage says about its own run meta: lines here, sections
  // after (StageSpec::summarize).
  std::string sections;
  for (const StageSpec* spec : StageSpecs()) {
    if (!spec->summarize) continue;
    StageTerminalNotes s = spec->summarize(JsonMember(d.run.meta, spec->name));
    for (const auto& line : s.lines) o << "  " << line << "\n";
    Errors(o, ReadErrorLines(d, std::string("meta ") + spec->name, s.problems));
    sections += s.section;
  }
  for (const auto& w : JsonStrings(d.run.meta, "warnings", &meta)) o << "  warning: " << w << "\n";
  Errors(o, ReadErrorLines(d, "meta", meta));
  o << sections;
}

}  // namespace

std::string RenderMatrixText(const PairMatrix& m, bool color) {
  std::ostringstream o;
  size_t width = 0;
  for (const auto& l : m.labels) width = std::max(width, l.size());
  o << "    " << Pad("", width + 2);
  for (size_t j = 0; j < m.labels.size(); ++j) o << " " << ColumnKey(j);
  for (size_t i = 0; i < m.labels.size(); ++i) {
    std::string row = "    " + std::string(1, ColumnKey(i)) + " " + Pad(m.labels[i], width);
    // The last untested cells would be trailing blanks.
    size_t last = m.labels.size();
    while (last > 0 && CellChar(m.cells[i][last - 1]) == ' ') --last;
    for (size_t j = 0; j < last; ++j) row += " " + Paint(CellChar(m.cells[i][j]), color);
    while (!row.empty() && row.back() == ' ') row.pop_back();
    o << "\n" << row;
  }
  return o.str();
}

namespace {

// "link-down on node4", "firewall between node2 and node5", joined by ", ".
std::string CausesPhrase(const std::vector<Verdict>& causes) {
  std::string out;
  for (const Verdict& v : causes) {
    std::string where;
    if (v.cause == CauseScope::kLink && !v.pairs.empty()) {
      where = "between " + v.pairs[0].first + " and " + v.pairs[0].second;
      if (v.pairs.size() > 1) where += " (+" + std::to_string(v.pairs.size() - 1) + " links)";
    } else {
      where = "on " + FoldHostlist(v.nodes);
    }
    out += (out.empty() ? "" : ", ") + v.kind + " " + where + " (" + v.stage + ")";
  }
  return out;
}

}  // namespace

std::string VerdictLine(const RunData& d) {
  OutcomeCounts c = CountOutcomes(d);
  std::set<std::string> bad_nodes;
  // A stage's own failing verdict whose results are not failures (a node
  // lost mid-stage: its unjudged probes are skips) still fails the run.
  std::set<std::string> verdict_nodes;
  // Likewise a warning verdict whose results are skips (the controller
  // lost contact with a node that answered again) is a warning of the run.
  bool warn_verdict = false;
  for (const auto& v : d.verdicts) {
    if (IsFailOrHang(v.severity)) {
      verdict_nodes.insert(v.nodes.begin(), v.nodes.end());
    }
    if (v.severity == Outcome::kWarn) warn_verdict = true;
  }
  for (const auto& r : d.node_results) {
    bool bad = IsFailOrHang(r.outcome);
    if (r.node != "*" && bad) bad_nodes.insert(r.node);
  }
  // A cause names its nodes; the failures it explains are counted, not
  // named (the rest of the cluster is not accused for them).
  const std::vector<Verdict> causes = analysis::LeadingCauses(d);
  const analysis::CausedScope caused = analysis::ScopeOfCauses(causes);
  std::set<std::string> pair_stages;
  for (const auto& r : d.pair_results) pair_stages.insert(r.stage);
  for (const auto& g : d.routine_pairs.groups()) pair_stages.insert(g.stage);
  // A pair stage's node result on an end of a caused link (nics: "node2
  // does not reach node5") is that link's, as analysis folds it.
  auto node_explained = [&](const NodeResult& r) {
    return caused.nodes.count(r.node) > 0 ||
           (caused.link_ends.count(r.node) > 0 && pair_stages.count(r.stage) > 0);
  };
  size_t explained = 0;
  OutcomeCounts unexplained;
  for (const auto& r : d.node_results) {
    if (!IsFailOrHang(r.outcome) || !node_explained(r)) continue;
    ++explained;
  }
  if (!causes.empty()) {
    bad_nodes.clear();
    for (const auto& r : d.node_results) {
      if (IsFailOrHang(r.outcome) && !node_explained(r) && r.node != "*") bad_nodes.insert(r.node);
    }
  }
  std::set<std::string> bad_pairs;
  for (const auto& r : d.pair_results) {
    if (!IsFailOrHang(r.outcome)) continue;
    if (caused.Covers(r.src, r.dst)) {
      ++explained;
      continue;
    }
    bad_pairs.insert(std::min(r.src, r.dst) + ">" + std::max(r.src, r.dst));
    (r.outcome == Outcome::kHang ? unexplained.hang : unexplained.fail)++;
  }
  for (const auto& r : d.node_results) {
    if (!IsFailOrHang(r.outcome) || node_explained(r)) continue;
    (r.outcome == Outcome::kHang ? unexplained.hang : unexplained.fail)++;
  }
  std::ostringstream o;
  if (d.run.status == "interrupted") {
    o << "INTERRUPTED: ";
  } else if (d.run.status == "killed") {
    o << "KILLED: ";
  } else if (d.run.exit_code == 3) {
    o << "UNJUDGEABLE: ";
  } else if (c.bad() > 0 || !verdict_nodes.empty()) {
    o << "FAIL: ";
  } else if (c.error > 0 || c.warn > 0 || warn_verdict) {
    o << "PASS with warnings: ";
  } else {
    o << "PASS: ";
  }
  const bool judged = d.run.status != "interrupted" && d.run.status != "killed";
  if (!causes.empty() && judged) {
    o << CausesPhrase(causes);
    if (explained > 0) {
      o << "; " << explained << " failed result" << (explained == 1 ? "" : "s") << " explained by "
        << (causes.size() == 1 ? "it" : "them");
    }
    if (unexplained.bad() > 0) {
      o << "; also " << unexplained.fail << " failed, " << unexplained.hang << " hung";
      if (!bad_nodes.empty()) {
        std::vector<std::string> sorted(bad_nodes.begin(), bad_nodes.end());
        o << " on " << FoldHostlist(sorted);
      }
      if (!bad_pairs.empty()) o << "; " << bad_pairs.size() << " node pairs bad";
    }
  } else if (c.bad() > 0) {
    o << c.fail << " failed, " << c.hang << " hung";
    if (!bad_nodes.empty()) {
      std::vector<std::string> sorted(bad_nodes.begin(), bad_nodes.end());
      o << " on " << FoldHostlist(sorted);
    }
    if (!bad_pairs.empty()) o << "; " << bad_pairs.size() << " node pairs bad";
  } else if (!verdict_nodes.empty()) {
    std::vector<std::string> sorted(verdict_nodes.begin(), verdict_nodes.end());
    o << "a failing verdict on " << FoldHostlist(sorted) << "; " << c.ToString();
  } else {
    o << c.ToString();
  }
  return o.str();
}

std::string RenderTerminal(const RunData& d, const TerminalOptions& opt) {
  std::ostringstream o;
  auto names = d.NodeNames();
  o << VerdictLine(d) << "\n";
  o << "run " << d.run.id << " of "
    << (d.run.inventory_name.empty() ? d.run.inventory_path : d.run.inventory_name) << " ("
    << names.size() << " nodes), " << d.run.started_at
    << (d.run.status == "running" || d.run.status == "killed" ? " [did not finish]" : "") << "\n";
  o << DescribeUnfinishedRun(d);
  Verdicts(o, d, AnalyzeStoredRun(d, opt.analysis), opt.color);
  Matrices(o, d, opt);
  StageCounts(o, d);
  if (!opt.db_path.empty()) {
    o << "\nstored as run " << d.run.id << " in " << opt.db_path << " (clustercheck report "
      << d.run.id << ")\n";
  }
  return o.str();
}

}  // namespace cc
