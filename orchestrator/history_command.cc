#include "orchestrator/history_command.h"

#include "common/outcome.h"
#include "orchestrator/store.h"
#include "reports/run_data.h"
#include "reports/terminal.h"

namespace cc {

int ReportCommand(const ReportOptions& o) {
  std::string path = o.db_path.empty() ? DefaultStorePath() : o.db_path;
  auto store = Store::Open(path);
  if (!store.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", store.status().ToString().c_str());
    return kExitUsage;
  }
  int64_t id = o.run_id;
  if (id == 0) {
    auto latest = (*store)->LatestRunId();
    if (!latest.ok()) {
      std::fprintf(o.err, "clustercheck: no runs in %s yet (clustercheck run INVENTORY)\n", path.c_str());
      return kExitUsage;
    }
    id = *latest;
  }
  auto data = LoadRunData(**store, id);
  if (!data.ok()) {
    std::fprintf(o.err, "clustercheck: run %lld: %s\n", static_cast<long long>(id),
                 data.status().ToString().c_str());
    return kExitUsage;
  }
  if (o.json) {
    std::fprintf(o.out, "%s\n", RunDataToJson(*data).dump(2).c_str());
  } else {
    TerminalOptions to;
    to.color = o.color;
    std::fprintf(o.out, "%s", RenderTerminal(*data, to).c_str());
  }
  return kExitOk;
}

int HistoryCommand(const std::string& db_path, std::FILE* out, std::FILE* err) {
  std::string path = db_path.empty() ? DefaultStorePath() : db_path;
  auto store = Store::Open(path);
  if (!store.ok()) {
    std::fprintf(err, "clustercheck: %s\n", store.status().ToString().c_str());
    return kExitUsage;
  }
  auto runs = (*store)->ListRuns(100);
  if (!runs.ok()) {
    std::fprintf(err, "clustercheck: %s\n", runs.status().ToString().c_str());
    return kExitUsage;
  }
  std::fprintf(out, "%-5s %-20s %-11s %-4s %-16s %s\n", "run", "started", "status", "exit",
               "inventory", "results");
  for (const auto& r : *runs) {
    auto data = LoadRunData(**store, r.id);
    std::string counts = data.ok() ? CountOutcomes(*data).ToString() : data.status().ToString();
    std::fprintf(out, "%-5lld %-20s %-11s %-4d %-16s %s\n", static_cast<long long>(r.id),
                 r.started_at.c_str(), r.status.c_str(), r.exit_code,
                 (r.inventory_name.empty() ? r.inventory_path : r.inventory_name).c_str(),
                 counts.c_str());
  }
  return kExitOk;
}

}  // namespace cc
