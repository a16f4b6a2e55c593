#include "orchestrator/store/run_data.h"

#include <algorithm>
#include <set>

#include "common/json_read.h"

namespace cc {

std::vector<std::string> RunData::NodeNames() const {
  std::vector<std::string> out;
  // What in the list is not a name is left out; the names keep their order.
  if (JsonMember(run.meta, "nodes").is_array()) return JsonStrings(run.meta, "nodes");
  for (const auto& n : nodes) out.push_back(n.node);
  for (const auto& r : node_results) {
    if (r.node == "*") continue;
    if (std::find(out.begin(), out.end(), r.node) == out.end()) out.push_back(r.node);
  }
  return out;
}

Result<RunData> LoadRunData(Store& store, int64_t run_id, MatrixCheckFn matrix_check) {
  RunData d;
  auto run = store.GetRun(run_id);
  if (!run.ok()) return run.status();
  d.run = *run;
  auto nodes = store.GetNodes(run_id);
  if (!nodes.ok()) return nodes.status();
  d.nodes = std::move(*nodes);
  auto nr = store.GetNodeResults(run_id);
  if (!nr.ok()) return nr.status();
  d.node_results = std::move(*nr);
  // Room made once: at 256 nodes there are 1.1 million, and growing by
  // doubling held 38 MB for a list of 13.
  if (auto count = store.CountPairResults(run_id); count.ok()) {
    d.routine_pairs.Reserve(static_cast<size_t>(count->results),
                            static_cast<size_t>(count->with_value));
  }
  std::set<std::pair<std::string, std::string>> checks_seen;
  Status pairs = store.ForEachPairResult(run_id, [&](PairResult&& r) {
    std::string check = matrix_check(r);
    if (checks_seen.insert({r.stage, check}).second) d.pair_check_order.push_back({r.stage, check});
    if (IsRoutinePairResult(r) && d.routine_pairs.Add(r, check)) return;
    d.pair_results.push_back(std::move(r));
  });
  if (!pairs.ok()) return pairs;
  auto verdicts = store.GetVerdicts(run_id);
  if (!verdicts.ok()) return verdicts.status();
  d.verdicts = std::move(*verdicts);
  return d;
}

void OutcomeCounts::Add(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      ++pass;
      break;
    case Outcome::kWarn:
      ++warn;
      break;
    case Outcome::kFail:
      ++fail;
      break;
    case Outcome::kHang:
      ++hang;
      break;
    case Outcome::kSkip:
      ++skip;
      break;
    case Outcome::kError:
      ++error;
      break;
  }
}

std::string OutcomeCounts::ToString() const {
  std::string out;
  auto add = [&](int n, const char* name) {
    if (n == 0) return;
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + " " + name;
  };
  add(fail, "fail");
  add(hang, "hang");
  add(error, "error");
  add(warn, "warn");
  add(skip, "skip");
  add(pass, "pass");
  return out.empty() ? "nothing" : out;
}

OutcomeCounts CountOutcomes(const RunData& data) {
  OutcomeCounts c;
  for (const auto& r : data.node_results) c.Add(r.outcome);
  for (const auto& r : data.pair_results) c.Add(r.outcome);
  for (const auto& e : data.routine_pairs.entries()) c.Add(data.routine_pairs.group(e).outcome);
  return c;
}

nlohmann::json PairResultToJson(const PairResult& r) {
  using nlohmann::json;
  json p{{"stage", r.stage},
         {"src", r.src},
         {"dst", r.dst},
         {"check", r.check},
         {"outcome", OutcomeName(r.outcome)},
         {"state", r.state},
         {"unit", r.unit},
         {"message", r.message},
         {"evidence", r.evidence},
         {"at", r.at}};
  p["value"] = r.value ? json(*r.value) : json();
  return p;
}

nlohmann::json RunDataToJson(const RunData& d, bool pair_results) {
  using nlohmann::json;
  json run{{"id", d.run.id},
           {"started_at", d.run.started_at},
           {"finished_at", d.run.finished_at},
           {"status", d.run.status},
           {"exit_code", d.run.exit_code},
           {"inventory",
            {{"path", d.run.inventory_path},
             {"name", d.run.inventory_name},
             {"sha256", d.run.inventory_sha256}}},
           {"argv", d.run.argv},
           {"version", d.run.version},
           {"meta", d.run.meta}};
  json nodes = json::array();
  for (const auto& n : d.nodes) {
    nodes.push_back({{"node", n.node},
                     {"address", n.address},
                     {"reachable", n.reachable},
                     {"error", n.error},
                     {"facts", n.facts}});
  }
  json nrs = json::array();
  for (const auto& r : d.node_results) {
    nrs.push_back({{"node", r.node},
                   {"stage", r.stage},
                   {"check", r.check},
                   {"outcome", OutcomeName(r.outcome)},
                   {"value", r.value},
                   {"expected", r.expected},
                   {"message", r.message},
                   {"evidence", r.evidence},
                   {"at", r.at}});
  }
  json prs = json::array();
  if (pair_results)
    d.ForEachPairResult([&](const PairResult& r) { prs.push_back(PairResultToJson(r)); });
  OutcomeCounts c = CountOutcomes(d);
  json counts{{"pass", c.pass}, {"warn", c.warn}, {"fail", c.fail},
              {"hang", c.hang}, {"skip", c.skip}, {"error", c.error}};
  json out{{"run", run},
           {"counts", counts},
           {"nodes", nodes},
           {"node_results", nrs},
           {"stage_verdicts", VerdictsToJson(d.verdicts)}};
  if (pair_results) out["pair_results"] = std::move(prs);
  return out;
}

}  // namespace cc
