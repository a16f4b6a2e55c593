#include "orchestrator/rerun.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/hostlist.h"
#include "common/outcome.h"
#include "orchestrator/stages/stages.h"

namespace cc {
namespace {

bool Rerun(Outcome o) { return IsFailOrHang(o) || o == Outcome::kError; }

}  // namespace

RerunSelection SelectFailed(const RunData& d) {
  RerunSelection sel;
  std::set<std::string> nodes;
  bool everyone = false;
  for (const auto& r : d.node_results) {
    if (!Rerun(r.outcome)) continue;
    if (r.node == "*") {
      everyone = true;
    } else {
      nodes.insert(r.node);
    }
  }
  for (const auto& r : d.pair_results) {
    if (!Rerun(r.outcome)) continue;
    nodes.insert(r.src);
    nodes.insert(r.dst);
    sel.pairs.push_back({r.stage, r.check, r.src, r.dst, r.outcome});
  }
  auto order = d.NodeNames();
  if (everyone) nodes.insert(order.begin(), order.end());
  for (const auto& n : order) {
    if (nodes.erase(n)) sel.nodes.push_back(n);
  }
  // Names the run did not list (odd, but keep them) go last.
  sel.nodes.insert(sel.nodes.end(), nodes.begin(), nodes.end());
  if (!sel.nodes.empty()) sel.hostlist = FoldHostlist(sel.nodes);
  return sel;
}

Result<std::vector<std::string>> LimitToSelection(Inventory& inv, const RerunSelection& sel) {
  std::set<std::string> wanted(sel.nodes.begin(), sel.nodes.end());
  std::vector<Node> kept;
  for (const auto& n : inv.nodes) {
    if (wanted.erase(n.name)) kept.push_back(n);
  }
  if (kept.empty()) {
    return Status::BadArgument("none of the nodes to rerun (" + sel.hostlist +
                               ") is in the inventory");
  }
  inv.nodes = std::move(kept);
  return std::vector<std::string>(wanted.begin(), wanted.end());
}

Result<RerunSelection> LoadRerunSelection(const std::string& db_path, int64_t run_id) {
  auto store = Store::Open(db_path);
  if (!store.ok()) return store.status();
  auto data = LoadRunData(**store, run_id, MatrixCheck);
  if (!data.ok()) return data.status();
  return SelectFailed(*data);
}

int ApplyRerunFailed(const std::string& db_path, int64_t run_id, Inventory& inv,
                     nlohmann::json& meta, std::FILE* out, std::FILE* err) {
  auto sel = LoadRerunSelection(db_path, run_id);
  if (!sel.ok()) {
    std::fprintf(err, "clustercheck: --rerun-failed %lld: %s\n", static_cast<long long>(run_id),
                 sel.status().ToString().c_str());
    return kExitUsage;
  }
  if (sel->empty()) {
    std::fprintf(out, "run %lld: nothing failed, hung or errored; nothing to rerun\n",
                 static_cast<long long>(run_id));
    return kExitOk;
  }
  auto gone = LimitToSelection(inv, *sel);
  if (!gone.ok()) {
    std::fprintf(err, "clustercheck: --rerun-failed %lld: %s\n", static_cast<long long>(run_id),
                 gone.status().message().c_str());
    return kExitUsage;
  }
  if (!gone->empty()) {
    std::fprintf(err, "clustercheck: --rerun-failed: %s no longer in the inventory\n",
                 FoldHostlist(*gone).c_str());
  }
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& p : sel->pairs) {
    pairs.push_back({{"stage", p.stage}, {"check", p.check}, {"src", p.src}, {"dst", p.dst}});
  }
  meta = {{"rerun_of", run_id}, {"rerun_pairs", pairs}};
  return -1;
}

}  // namespace cc
