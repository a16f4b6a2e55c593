#include "reports/json_report.h"

#include <cstdio>
#include <string>

#include "common/json_read.h"
#include "reports/node_table.h"
#include "reports/retests.h"
#include "reports/terminal.h"

namespace cc {
namespace {

constexpr const char* kPairResultsKey = "\"pair_results\": []";

nlohmann::json WithoutPairResults(const RunData& data, const std::vector<Verdict>& verdicts) {
  nlohmann::json j = RunDataToJson(data, false);
  j["verdict"] = VerdictLine(data);
  j["verdicts"] = VerdictsToJson(verdicts);
  j["node_table"] = NodeTableToJson(BuildNodeTable(data));
  // Only runs that retested something say so (confirm.h).
  auto retests = RetestsOf(data);
  if (!retests.empty()) j["retests"] = RetestsJson(retests);
  return j;
}

// `text` (a dump(2)) with every line but the first indented by `indent`.
std::string Indented(const std::string& text, const std::string& indent) {
  std::string out;
  for (char c : text) {
    out += c;
    if (c == '\n') out += indent;
  }
  return out;
}

}  // namespace

PairRows PairRowsOf(Store& store, int64_t run_id) {
  return [&store, run_id](const std::function<void(PairResult &&)>& each) {
    return store.ForEachPairResult(run_id, each);
  };
}

std::function<void(std::string_view)> FileWriter(std::FILE* out) {
  return [out](std::string_view s) { std::fwrite(s.data(), 1, s.size(), out); };
}

nlohmann::json ReportJson(const RunData& data, const std::vector<Verdict>& verdicts) {
  nlohmann::json j = WithoutPairResults(data, verdicts);
  nlohmann::json pairs = nlohmann::json::array();
  data.ForEachPairResult([&](const PairResult& r) { pairs.push_back(PairResultToJson(r)); });
  j["pair_results"] = std::move(pairs);
  return j;
}

Status WriteReportJson(const std::function<void(std::string_view)>& write, const RunData& data,
                       const std::vector<Verdict>& verdicts, const PairRows& rows) {
  nlohmann::json j = WithoutPairResults(data, verdicts);
  j["pair_results"] = nlohmann::json::array();
  // The document around an empty array, whose place the rows then fill
  // as dump(2) would: one object per line block, at the array's depth.
  // Text the agent read from a node may hold bytes that are not UTF-8.
  std::string text = JsonDump(j, 2);
  size_t at = text.find(kPairResultsKey);
  const std::string_view all(text);
  write(all.substr(0, at));
  write("\"pair_results\": [");
  bool first = true;
  Status s = rows([&](PairResult&& r) {
    write(first ? "\n    " : ",\n    ");
    write(Indented(JsonDump(PairResultToJson(r), 2), "    "));
    first = false;
  });
  write(first ? "]" : "\n  ]");
  write(all.substr(at + std::string_view(kPairResultsKey).size()));
  write("\n");
  return s;
}

}  // namespace cc
