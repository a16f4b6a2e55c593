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

struct Suite {
  std::string name;
  std::vector<Case> cases;
  int passing_pairs = 0;
  int failures = 0, errors = 0, skipped = 0;
  void Add(Case c) {
    if (IsFailOrHang(c.outcome)) ++failures;
    if (c.outcome == Outcome::kError) ++errors;
    if (c.outcome == Outcome::kSkip) ++skipped;
    cases.push_back(std::move(c));
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

void WriteCase(std::ostringstream& o, const Case& c) {
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

}  // namespace

std::string RenderJunit(const RunData& d) {
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
  for (const auto& r : d.node_results) {
    std::string msg = r.message.empty() ? OutcomeName(r.outcome) : r.message;
    suite(r.stage).Add(
        {r.stage + "." + r.check, r.node, r.outcome, msg, Detail(r.value, r.expected, r.evidence)});
  }
  for (const auto& r : d.pair_results) {
    Suite& s = suite(r.stage);
    if (r.outcome == Outcome::kPass) {
      ++s.passing_pairs;
      continue;
    }
    std::string msg = r.src + " -> " + r.dst + ": " + (r.state.empty() ? "" : r.state + ": ") +
                      (r.message.empty() ? OutcomeName(r.outcome) : r.message);
    std::string value = r.value ? nlohmann::json(*r.value).dump() + " " + r.unit : "";
    s.Add({r.stage + "." + r.check, r.src + " -> " + r.dst, r.outcome, msg,
           Detail(value, "", r.evidence)});
  }
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  for (const auto& s : suites) {
    tests += static_cast<int>(s.cases.size());
    failures += s.failures;
    errors += s.errors;
    skipped += s.skipped;
  }
  std::ostringstream o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuites name=\""
    << EscapeXml("clustercheck run " + std::to_string(d.run.id) + " of " + d.run.inventory_name)
    << "\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\"" << errors
    << "\" skipped=\"" << skipped << "\" timestamp=\"" << EscapeXml(d.run.started_at) << "\">\n";
  for (const auto& s : suites) {
    o << "  <testsuite name=\"" << EscapeXml(s.name) << "\" tests=\"" << s.cases.size()
      << "\" failures=\"" << s.failures << "\" errors=\"" << s.errors << "\" skipped=\""
      << s.skipped << "\" timestamp=\"" << EscapeXml(d.run.started_at) << "\">\n";
    o << "    <properties>\n"
      << "      <property name=\"passing_pairs\" value=\"" << s.passing_pairs << "\"/>\n"
      << "    </properties>\n";
    for (const auto& c : s.cases) WriteCase(o, c);
    o << "  </testsuite>\n";
  }
  o << "</testsuites>\n";
  return o.str();
}

}  // namespace cc
