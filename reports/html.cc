#include "reports/html.h"

#include <algorithm>
#include <map>
#include <optional>
#include <sstream>

#include "common/json_read.h"
#include "orchestrator/stages/stages.h"
#include "reports/burnin_html.h"
#include "reports/escape.h"
#include "reports/heatmap_svg.h"
#include "reports/html_style.h"
#include "reports/node_table.h"
#include "reports/pair_matrix.h"
#include "reports/read_errors.h"
#include "reports/retests.h"
#include "reports/terminal.h"

namespace cc {
namespace {

using nlohmann::json;

std::string E(const std::string& s) { return EscapeXml(s); }

std::string Badge(Outcome o) {
  std::string name = OutcomeName(o);
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  return "<span class=\"badge b-" + name + "\">" + upper + "</span>";
}

// The page's colour: red when anything failed or hung, amber for
// warnings and errors, green otherwise.
const char* PageSeverity(const OutcomeCounts& c) {
  if (c.bad() > 0) return "fail";
  if (c.warn > 0 || c.error > 0) return "warn";
  return "pass";
}

void Header(std::ostringstream& o, const RunData& d, bool burnin) {
  OutcomeCounts c = CountOutcomes(d);
  std::string line = VerdictLine(d);
  std::string word = line.substr(0, line.find(':'));
  std::string rest = line.find(": ") == std::string::npos ? "" : line.substr(line.find(": ") + 2);
  o << "<header class=\"top s-" << PageSeverity(c) << "\"><div class=\"inner\">\n"
    << "<div><span class=\"word\">" << E(word) << "</span><span class=\"line\">" << E(rest)
    << "</span></div>\n"
    << "<div class=\"sub\">run " << d.run.id << " of <b>"
    << E(d.run.inventory_name.empty() ? d.run.inventory_path : d.run.inventory_name)
    << "</b> &middot; " << d.NodeNames().size() << " nodes &middot; " << E(d.run.started_at)
    << (d.run.finished_at.empty() ? " (did not finish)" : " &rarr; " + E(d.run.finished_at))
    << " &middot; clustercheck " << E(d.run.version) << "</div>\n<div class=\"counts\">";
  auto count = [&](int n, const char* what) {
    if (n > 0) o << "<span>" << n << " " << what << "</span>";
  };
  count(c.fail, "fail");
  count(c.hang, "hang");
  count(c.error, "error");
  count(c.warn, "warn");
  count(c.skip, "skip");
  count(c.pass, "pass");
  o << "</div></div></header>\n";
  o << "<nav><div class=\"inner\"><a href=\"#verdicts\">Verdicts</a><a href=\"#pairs\">Pair "
       "checks</a><a href=\"#nodes\">Nodes</a>"
    << (burnin ? "<a href=\"#burnin\">Burn-in</a>" : "")
    << "<a href=\"#checks\">Node checks</a><a href=\"#run\">Run</a></div></nav>\n";
}

// What could not be read, each line in the place of what it was read for.
void Errors(std::ostringstream& o, const std::vector<std::string>& lines) {
  for (const auto& line : lines) {
    o << "<div class=\"v s-error\"><div class=\"head\">" << Badge(Outcome::kError)
      << "<span class=\"kind\">error</span></div>\n<div class=\"summary\">" << E(line)
      << "</div></div>\n";
  }
}

void Verdicts(std::ostringstream& o, const RunData& d, const std::vector<Verdict>& vs) {
  o << "<section id=\"verdicts\"><h2>Verdicts<small>" << vs.size()
    << ", worst first</small></h2>\n";
  if (vs.empty()) {
    o << "<div class=\"ok\">Nothing to act on: every check passed or was skipped.</div>\n";
  } else {
    o << "<div class=\"verdicts\">\n";
  }
  for (const auto& v : vs) {
    std::string where = v.stage + (v.check.empty() ? "" : " / " + v.check);
    o << "<div class=\"v s-" << OutcomeName(v.severity) << "\">"
      << "<div class=\"head\">" << Badge(v.severity) << "<span class=\"kind\">" << E(v.kind)
      << "</span><span class=\"where mono\">" << E(where) << "</span></div>\n"
      << "<div class=\"summary\">" << E(v.summary) << "</div>\n";
    if (!v.next_step.empty()) {
      o << "<div class=\"next\"><b>Next:</b> " << E(v.next_step) << "</div>\n";
    }
    if (!v.evidence.empty()) {
      o << "<details><summary>Evidence";
      if (!v.pairs.empty())
        o << " (" << v.pairs.size() << " pair" << (v.pairs.size() == 1 ? "" : "s") << ")";
      o << "</summary><pre>" << E(JsonDump(v.evidence, 2)) << "</pre></details>\n";
    }
    o << "</div>\n";
  }
  Errors(o, VerdictReadErrors(d, vs));
  if (!vs.empty()) o << "</div>\n";
  o << "</section>\n";
}

void Matrices(std::ostringstream& o, const RunData& d, const HtmlOptions& opt) {
  MatrixOptions mo;
  mo.fold = d.NodeNames().size() > opt.unfold_up_to;
  auto ms = BuildPairMatrices(d, mo);
  o << "<section id=\"pairs\"><h2>Pair checks<small>" << ms.size() << " matrices"
    << (mo.fold ? ", alike nodes folded into ranges" : "") << "</small></h2>\n";
  if (ms.empty()) {
    o << "<div class=\"ok\">No pair checks in this run.</div></section>\n";
    return;
  }
  o << "<div class=\"matrices\">\n";
  for (const auto& m : ms) {
    o << "<figure><figcaption>" << E(m.stage + " " + m.check) << "<small>" << E(m.counts.ToString())
      << (m.has_values ? " &middot; colour: " + E(m.unit) + " (worst of a cell)" : "")
      << "</small></figcaption>\n"
      << RenderHeatmapSvg(m) << "\n</figure>\n";
  }
  o << "</div>\n<div class=\"legend\">";
  for (Outcome x : {Outcome::kPass, Outcome::kWarn, Outcome::kFail, Outcome::kHang, Outcome::kError,
                    Outcome::kSkip}) {
    o << "<span><i style=\"background:" << OutcomeColour(x) << "\"></i>" << OutcomeName(x)
      << "</span>";
  }
  o << "<span><i style=\"background:#f1f2f4\"></i>not tested</span>"
    << "<span>rows send, columns receive; hover a cell for details</span></div>\n</section>\n";
}

// The most common non-empty value of a column, to mark the odd ones out.
std::string Majority(const std::vector<NodeRow>& rows, std::string NodeRow::*field) {
  std::map<std::string, int> n;
  for (const auto& r : rows) {
    if (!(r.*field).empty()) ++n[r.*field];
  }
  std::string best;
  int most = 0;
  for (const auto& [v, k] : n) {
    if (k > most) {
      best = v;
      most = k;
    }
  }
  // Two or more nodes agreeing make a reference; a lone value does not.
  return most >= 2 ? best : "";
}

void Nodes(std::ostringstream& o, const RunData& d) {
  auto rows = BuildNodeTable(d);
  o << "<section id=\"nodes\"><h2>Nodes<small>" << rows.size() << "</small></h2>\n"
    << "<table><tr><th>node</th><th>address</th><th>reachable</th><th>driver</th><th>cuda</th>"
       "<th>nccl</th><th>gpus</th><th>worst</th><th>node checks</th></tr>\n";
  std::string m_driver = Majority(rows, &NodeRow::driver), m_cuda = Majority(rows, &NodeRow::cuda),
              m_nccl = Majority(rows, &NodeRow::nccl), m_gpus = Majority(rows, &NodeRow::gpus);
  auto cell = [&](const std::string& v, const std::string& majority) {
    bool odd = !v.empty() && !majority.empty() && v != majority;
    o << "<td class=\"mono" << (odd ? " odd" : "") << "\">" << E(v) << "</td>";
  };
  for (const auto& r : rows) {
    o << "<tr class=\"w-" << OutcomeName(r.worst) << "\"><td class=\"mono\"><b>" << E(r.node)
      << "</b></td><td class=\"mono\">" << E(r.address) << "</td>";
    if (r.reachable) {
      o << "<td>yes</td>";
    } else {
      o << "<td class=\"no\">no" << (r.error.empty() ? "" : ": " + E(r.error)) << "</td>";
    }
    cell(r.driver, m_driver);
    cell(r.cuda, m_cuda);
    cell(r.nccl, m_nccl);
    cell(r.gpus, m_gpus);
    o << "<td>" << Badge(r.worst) << "</td><td>" << E(r.counts.ToString()) << "</td></tr>\n";
  }
  o << "</table></section>\n";
}

// The tables stages add (StageSpec::report_table), after the node table.
void StageTables(std::ostringstream& o, const RunData& d) {
  for (const StageSpec* spec : StageSpecs()) {
    if (!spec->report_table) continue;
    std::optional<StageReportTable> t = spec->report_table(d);
    if (!t) continue;
    o << "<section id=\"" << E(t->id) << "\"><h2>" << E(t->title) << "<small>" << t->rows.size()
      << (t->note.empty() ? "" : ", " + E(t->note)) << "</small></h2>\n<table><tr>";
    for (const auto& c : t->columns) o << "<th>" << E(c) << "</th>";
    o << "</tr>\n";
    for (const auto& row : t->rows) {
      o << "<tr class=\"w-" << OutcomeName(row.outcome) << "\">";
      for (size_t i = 0; i < row.cells.size(); ++i) {
        o << "<td class=\"mono\">" << (i == 0 ? "<b>" : "") << E(row.cells[i])
          << (i == 0 ? "</b>" : "") << "</td>";
      }
      o << "</tr>\n";
    }
    o << "</table>\n";
    Errors(o, ReadErrorLines(d, std::string("stage ") + spec->name, t->problems));
    for (const auto& [caption, text] : t->blocks) {
      o << "<figure><figcaption>" << E(caption) << "</figcaption><pre>" << E(text)
        << "</pre></figure>\n";
    }
    o << "</section>\n";
  }
}

void NodeChecks(std::ostringstream& o, const RunData& d) {
  std::vector<const NodeResult*> rs;
  size_t total = 0;
  for (const auto& r : d.node_results) {
    ++total;
    if (r.outcome != Outcome::kPass) rs.push_back(&r);
  }
  std::stable_sort(rs.begin(), rs.end(), [](const NodeResult* a, const NodeResult* b) {
    return OutcomeSeverity(a->outcome) > OutcomeSeverity(b->outcome);
  });
  o << "<section id=\"checks\"><h2>Node checks that did not pass<small>" << rs.size() << " of "
    << total << "</small></h2>\n";
  if (rs.empty()) {
    o << "<div class=\"ok\">Every node check passed.</div></section>\n";
    return;
  }
  o << "<table><tr><th>outcome</th><th>stage / check</th><th>node</th><th>value</th>"
       "<th>expected</th><th>message</th></tr>\n";
  for (const auto* r : rs) {
    o << "<tr><td>" << Badge(r->outcome) << "</td><td class=\"mono\">"
      << E(r->stage + " / " + r->check) << "</td><td class=\"mono\">" << E(r->node)
      << "</td><td class=\"mono\">" << E(r->value) << "</td><td class=\"mono\">" << E(r->expected)
      << "</td><td>" << E(r->message) << "</td></tr>\n";
  }
  o << "</table></section>\n";
}

std::string JoinJson(const json& v) {
  if (!v.is_array()) return v.is_string() ? v.get<std::string>() : JsonDump(v);
  std::string s;
  for (const auto& x : v)
    s += (s.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : JsonDump(x));
  return s;
}

void Metadata(std::ostringstream& o, const RunData& d) {
  const auto& r = d.run;
  o << "<section id=\"run\"><h2>Run</h2><dl class=\"meta\">\n";
  auto row = [&](const char* k, const std::string& v) {
    if (!v.empty()) o << "<dt>" << k << "</dt><dd class=\"mono\">" << E(v) << "</dd>\n";
  };
  row("run", std::to_string(r.id));
  row("status", r.status + ", exit code " + std::to_string(r.exit_code));
  row("started", r.started_at);
  row("finished", r.finished_at.empty() ? "(did not finish)" : r.finished_at);
  row("clustercheck", r.version);
  row("argv", r.argv);
  row("inventory", r.inventory_path);
  row("inventory name", r.inventory_name);
  row("inventory sha256", r.inventory_sha256);
  if (r.meta.is_object()) {
    for (const auto& [k, v] : r.meta.items()) {
      if (k == "nodes") continue;                 // the node table shows them
      if (k.rfind("retests.", 0) == 0) continue;  // one line per stage below
      row(k.c_str(), JoinJson(v));
    }
  } else {
    JsonProblems meta;
    meta.Note("meta", "an object", r.meta);
    for (const auto& line : ReadErrorLines(d, "run", meta)) row("error", line);
  }
  for (const auto& rt : RetestsOf(d)) row(E("retests " + rt.stage).c_str(), RetestLine(rt));
  o << "</dl></section>\n";
}

}  // namespace

std::string RenderHtml(const RunData& d, const std::vector<Verdict>& verdicts,
                       const HtmlOptions& options) {
  std::ostringstream o;
  std::string line = VerdictLine(d);
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    << "<title>" << E(line.substr(0, line.find(':'))) << " \xC2\xB7 clustercheck run " << d.run.id
    << " \xC2\xB7 " << E(d.run.inventory_name) << "</title>\n"
    << "<style>" << kReportCss << "</style></head>\n<body>\n";
  Header(o, d, options.burnin != nullptr);
  o << "<main>\n";
  Verdicts(o, d, verdicts);
  Matrices(o, d, options);
  Nodes(o, d);
  if (options.burnin) o << RenderBurnInSection(*options.burnin);
  StageTables(o, d);
  NodeChecks(o, d);
  Metadata(o, d);
  o << "<footer>Rendered from the results store by clustercheck report. Self-contained: no "
       "scripts, no fetches.</footer>\n</main>\n</body></html>\n";
  return o.str();
}

}  // namespace cc
