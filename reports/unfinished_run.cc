#include "reports/unfinished_run.h"

#include <map>
#include <vector>

#include "common/json_read.h"

namespace cc {
namespace {

// Stages in run order: "connect", then the run's stages as planned, then
// any other stage that stored something.
std::vector<std::string> StageOrder(const RunData& d) {
  std::vector<std::string> order = {"connect"};
  auto add = [&](const std::string& s) {
    for (const auto& o : order)
      if (o == s) return;
    order.push_back(s);
  };
  auto it = d.run.meta.find("stages");
  if (it != d.run.meta.end() && it->is_array()) {
    for (const auto& s : *it)
      if (s.is_string()) add(s.get<std::string>());
  }
  for (const auto& r : d.node_results) add(r.stage);
  for (const auto& r : d.pair_results) add(r.stage);
  for (const auto& g : d.routine_pairs.groups()) add(g.stage);
  return order;
}

}  // namespace

std::string DescribeUnfinishedRun(const RunData& d) {
  const std::string& status = d.run.status;
  if (status != "killed" && status != "running") return "";
  std::string reason = JsonString(JsonMember(d.run.meta, "liveness"), "reason");
  std::map<std::string, OutcomeCounts> per_stage;
  std::string last;
  for (const auto& r : d.node_results) {
    per_stage[r.stage].Add(r.outcome);
    last = std::max(last, r.at);
  }
  for (const auto& r : d.pair_results) {
    per_stage[r.stage].Add(r.outcome);
    last = std::max(last, r.at);
  }
  const RoutinePairs& routine = d.routine_pairs;
  for (const auto& e : routine.entries())
    per_stage[routine.group(e).stage].Add(routine.group(e).outcome);
  last = std::max(last, routine.last_at());
  std::string out = status + ": " + (reason.empty() ? "the run did not finish" : reason) + "\n";
  out += status == "killed" ? "stored before it died:" : "stored so far:";
  bool first = true;
  for (const auto& stage : StageOrder(d)) {
    auto it = per_stage.find(stage);
    out += std::string(first ? " " : "; ") + stage + " " +
           (it == per_stage.end() ? "nothing" : it->second.ToString());
    first = false;
  }
  out += "\n";
  if (!last.empty()) out += "last result at " + last + "\n";
  return out;
}

}  // namespace cc
