#include "reports/junit.h"

#include <map>
#include <sstream>

#include "reports/escape.h"

namespace cc {
namespace {

struct Case {
  std::string classname, name;
  Outcome outcome;
  std::string message, detail;
};

// A suite's counts, known before its testcases are written.
struct Suite {
  std::string name;
  int tests = 0;
  int passing_pairs = 0;
  int failures = 0, errors = 0, skipped = 0;
  void Count(Outcome o) {
    ++tests;
    if (IsFailOrHang(o)) ++failures;
    if (o == Outcome::kError) ++errors;
    if (o == Outcome::kSkip) ++skipped;
  }
};

std::string Detail(const std::string& value, const std::string& expected,
                   const nlohmann::json& evidence) {
  std::string d;
  if (!value.empty()) d += "value: " + value + "\n";
  if (!expected.empty()) d += "expected: " + expected + "\n";
  if (!evidence.empty())
    d += "evidence: " + evidence.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
  return d;
}

void WriteCase(std::ostream& o, const Case& c) {
  o << "    <testcase classname=\"" << EscapeXml(c.classname) << "\" name=\"" << EscapeXml(c.name)
    << "\" time=\"0\"";
  std::string msg = EscapeXml(c.message);
  std::string body = EscapeXml(c.detail);
  switch (c.outcome) {
    case Outcome::kPass:
      o << "/>\n";
      return;
    case Outcome::kWarn:
      o << ">\n      <system-out>warn: " << msg << "</system-out>\n";
      break;
    case Outcome::kSkip:
      o << ">\n      <skipped message=\"" << msg << "\"/>\n";
      break;
    case Outcome::kError:
      o << ">\n      <error message=\"" << msg << "\" type=\"error\">" << body << "</error>\n";
      break;
    case Outcome::kFail:
    case Outcome::kHang:
      o << ">\n      <failure message=\"" << msg << "\" type=\"" << OutcomeName(c.outcome) << "\">"
        << body << "</failure>\n";
      break;
  }
  o << "    </testcase>\n";
}

Case CaseOf(const NodeResult& r) {
  std::string msg = r.message.empty() ? OutcomeName(r.outcome) : r.message;
  return {r.stage + "." + r.check, r.node, r.outcome, msg, Detail(r.value, r.expected, r.evidence)};
}

Case CaseOf(const PairResult& r) {
  std::string msg = r.src + " -> " + r.dst + ": " + (r.state.empty() ? "" : r.state + ": ") +
                    (r.message.empty() ? OutcomeName(r.outcome) : r.message);
  std::string value = r.value ? nlohmann::json(*r.value).dump() + " " + r.unit : "";
  return {r.stage + "." + r.check, r.src + " -> " + r.dst, r.outcome, msg,
          Detail(value, "", r.evidence)};
}

// The suites in the order their stages first appear, counted.
std::vector<Suite> CountSuites(const RunData& d) {
  std::vector<Suite> suites;
  std::map<std::string, size_t> at;
  auto suite = [&](const std::string& stage) -> Suite& {
    auto [it, fresh] = at.try_emplace(stage, suites.size());
    if (fresh) {
      suites.emplace_back();
      suites.back().name = stage;
    }
    return suites[it->second];
  };
  auto pair = [&](const std::string& stage, Outcome o) {
    Suite& s = suite(stage);
    if (o == Outcome::kPass) {
      ++s.passing_pairs;
    } else {
      s.Count(o);
    }
  };
  for (const auto& r : d.node_results) suite(r.stage).Count(r.outcome);
  for (const auto& r : d.pair_results) pair(r.stage, r.outcome);
  const RoutinePairs& routine = d.routine_pairs;
  for (const auto& e : routine.entries()) pair(routine.group(e).stage, routine.group(e).outcome);
  return suites;
}

// The testcases of one suite: its node checks, then its pairs that did not
// pass, one at a time.
void WriteCases(std::ostream& o, const RunData& d, const std::string& stage) {
  for (const auto& r : d.node_results) {
    if (r.stage == stage) WriteCase(o, CaseOf(r));
  }
  for (const auto& r : d.pair_results) {
    if (r.stage == stage && r.outcome != Outcome::kPass) WriteCase(o, CaseOf(r));
  }
  const RoutinePairs& routine = d.routine_pairs;
  for (const auto& e : routine.entries()) {
    const RoutinePairs::Group& g = routine.group(e);
    if (g.stage == stage && g.outcome != Outcome::kPass)
      WriteCase(o, CaseOf(routine.Materialize(e)));
  }
}

}  // namespace

void WriteJunit(std::ostream& o, const RunData& d) {
  std::vector<Suite> suites = CountSuites(d);
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const auto& s : suites) {
    tests += s.tests;
    failures += s.failures;
    errors += s.errors;
    skipped += s.skipped;
  }
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuites name=\""
    << EscapeXml("clustercheck run " + std::to_string(d.run.id) + " of " + d.run.inventory_name)
    << "\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\"" << errors
    << "\" skipped=\"" << skipped << "\" timestamp=\"" << EscapeXml(d.run.started_at) << "\">\n";
  for (const auto& s : suites) {
    o << "  <testsuite name=\"" << EscapeXml(s.name) << "\" tests=\"" << s.tests << "\" failures=\""
      << s.failures << "\" errors=\"" << s.errors << "\" skipped=\"" << s.skipped
      << "\" timestamp=\"" << EscapeXml(d.run.started_at) << "\">\n";
    o << "    <properties>\n"
      << "      <property name=\"passing_pairs\" value=\"" << s.passing_pairs << "\"/>\n"
      << "    </properties>\n";
    WriteCases(o, d, s.name);
    o << "  </testsuite>\n";
  }
  o << "</testsuites>\n";
}

std::string RenderJunit(const RunData& d) {
  std::ostringstream o;
  WriteJunit(o, d);
  return o.str();
}

}  // namespace cc
