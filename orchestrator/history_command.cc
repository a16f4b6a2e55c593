#include "orchestrator/history_command.h"

#include <algorithm>
#include <fstream>
#include <optional>

#include "common/json_read.h"
#include "common/outcome.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/burnin/burnin_command.h"
#include "orchestrator/burnin/burnin_diff.h"
#include "orchestrator/diff.h"
#include "orchestrator/run/run_lock.h"
#include "orchestrator/stages/stages.h"
#include "orchestrator/store/run_data.h"
#include "orchestrator/store/store.h"
#include "reports/html.h"
#include "reports/json_report.h"
#include "reports/junit.h"
#include "reports/read_errors.h"
#include "reports/terminal.h"

namespace cc {
namespace {

Result<std::unique_ptr<Store>> OpenStore(const std::string& db_path, std::FILE* err) {
  std::string path = db_path.empty() ? DefaultStorePath() : db_path;
  auto store = Store::Open(path);
  if (!store.ok()) std::fprintf(err, "clustercheck: %s\n", store.status().ToString().c_str());
  return store;
}

// Run `id`, or the latest when id is 0; prints why not on `err`.
Result<RunData> Load(Store& store, int64_t id, std::FILE* err) {
  if (id == 0) {
    auto latest = store.LatestRunId();
    if (!latest.ok()) {
      std::fprintf(err, "clustercheck: no runs in %s yet (clustercheck run INVENTORY)\n",
                   store.path().c_str());
      return latest.status();
    }
    id = *latest;
  }
  auto data = LoadRunData(store, id, MatrixCheck);
  if (!data.ok()) {
    std::fprintf(err, "clustercheck: run %lld: %s\n", static_cast<long long>(id),
                 data.status().ToString().c_str());
  } else {
    ApplyRunLiveness(data->run);
  }
  return data;
}

// write(std::ostream&) writes the file's text.
template <typename Write>
bool WriteFileWith(const std::string& path, Write write, std::FILE* err) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  write(f);
  f.close();
  if (!f) {
    std::fprintf(err, "clustercheck: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

bool WriteFile(const std::string& path, const std::string& text, std::FILE* err) {
  return WriteFileWith(
      path, [&](std::ostream& f) { f << text; }, err);
}

// "2 hang, 5 fail, 1 warn" by verdict severity; "-" for none.
std::string VerdictCounts(const std::vector<Verdict>& vs) {
  OutcomeCounts c;
  for (const auto& v : vs) c.Add(v.severity);
  return vs.empty() ? "-" : c.ToString();
}

}  // namespace

int ReportCommand(const ReportOptions& o) {
  auto store = OpenStore(o.db_path, o.err);
  if (!store.ok()) return kExitUsage;
  auto data = Load(**store, o.run_id, o.err);
  if (!data.ok()) return kExitUsage;
  AnalysisOptions ao;
  ao.outlier_fraction = o.outlier_fraction;
  ao.min_busbw_gbps = o.min_busbw_gbps;
  std::optional<RunData> baseline;
  if (o.baseline_run != 0) {
    auto b = Load(**store, o.baseline_run, o.err);
    if (!b.ok()) return kExitUsage;
    baseline = std::move(*b);
    ao.baseline = &*baseline;
  }
  auto verdicts = AnalyzeStoredRun(*data, ao);
  std::optional<BurnInSummary> burnin = StoredBurnIn(**store, data->run, data->NodeNames());
  HtmlOptions html;
  html.burnin = burnin ? &*burnin : nullptr;
  if (!o.html_path.empty() && !WriteFile(o.html_path, RenderHtml(*data, verdicts, html), o.err)) {
    return kExitUsage;
  }
  if (!o.junit_path.empty() &&
      !WriteFileWith(
          o.junit_path, [&](std::ostream& f) { WriteJunit(f, *data); }, o.err)) {
    return kExitUsage;
  }
  if (o.json) {
    Status s =
        WriteReportJson(FileWriter(o.out), *data, verdicts, PairRowsOf(**store, data->run.id));
    if (!s.ok()) {
      std::fprintf(o.err, "clustercheck: %s\n", s.ToString().c_str());
      return kExitUsage;
    }
  } else {
    TerminalOptions to;
    to.color = o.color;
    to.analysis = ao;
    std::fprintf(o.out, "%s", RenderTerminal(*data, to).c_str());
  }
  return kExitOk;
}

int HistoryCommand(const std::string& db_path, std::FILE* out, std::FILE* err) {
  auto store = OpenStore(db_path, err);
  if (!store.ok()) return kExitUsage;
  auto runs = (*store)->ListRuns(100);
  if (!runs.ok()) {
    std::fprintf(err, "clustercheck: %s\n", runs.status().ToString().c_str());
    return kExitUsage;
  }
  std::fprintf(out, "%-5s %-20s %-11s %-4s %-16s %-5s %-26s %s\n", "run", "started", "status",
               "exit", "inventory", "nodes", "verdicts", "results");
  for (auto& r : *runs) {
    ApplyRunLiveness(r);
    auto data = LoadRunData(**store, r.id, MatrixCheck);
    std::string verdicts = "?", counts = "?", nodes = "?";
    if (data.ok()) {
      verdicts = VerdictCounts(AnalyzeStoredRun(*data));
      counts = CountOutcomes(*data).ToString();
      nodes = std::to_string(data->NodeNames().size());
    } else {
      counts = data.status().ToString();
    }
    std::fprintf(out, "%-5lld %-20s %-11s %-4d %-16s %-5s %-26s %s\n", static_cast<long long>(r.id),
                 r.started_at.c_str(), r.status.c_str(), r.exit_code,
                 (r.inventory_name.empty() ? r.inventory_path : r.inventory_name).c_str(),
                 nodes.c_str(), verdicts.c_str(), counts.c_str());
  }
  return kExitOk;
}

int DiffCommand(const DiffCommandOptions& o) {
  auto store = OpenStore(o.db_path, o.err);
  if (!store.ok()) return kExitUsage;
  if (o.a == 0) {
    std::fprintf(o.err, "clustercheck: diff needs the earlier run's id\n");
    return kExitUsage;
  }
  auto a = Load(**store, o.a, o.err);
  if (!a.ok()) return kExitUsage;
  auto b = Load(**store, o.b, o.err);
  if (!b.ok()) return kExitUsage;
  // Two burn-ins are compared by rate, not by single outcomes.
  std::optional<BurnInSummary> burn_a = StoredBurnIn(**store, a->run, a->NodeNames());
  std::optional<BurnInSummary> burn_b = StoredBurnIn(**store, b->run, b->NodeNames());
  if (burn_a && burn_b) {
    std::vector<RateChange> changes = DiffBurnInRates(*burn_a, *burn_b);
    if (o.json) {
      std::fprintf(o.out, "%s\n", JsonDump(BurnInDiffToJson(changes), 2).c_str());
    } else {
      std::fprintf(o.out, "%s", RenderBurnInDiff(changes).c_str());
    }
    bool worse = std::any_of(changes.begin(), changes.end(), [](const RateChange& c) {
      return c.kind == RateChange::Kind::kWorse ||
             (c.kind == RateChange::Kind::kNew && c.failures_after > 0);
    });
    return worse ? kExitFailed : kExitOk;
  }
  DiffOptions dopt;
  dopt.tolerance = o.tolerance;
  RunDiff diff = DiffRuns(*a, *b, dopt);
  if (o.json) {
    std::fprintf(o.out, "%s\n", JsonDump(DiffToJson(diff), 2).c_str());
  } else {
    std::fprintf(o.out, "%s", RenderDiff(diff).c_str());
  }
  return diff.worse() ? kExitFailed : kExitOk;
}

}  // namespace cc
