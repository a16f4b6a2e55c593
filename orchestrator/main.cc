// clustercheck: the controller. Only this file wires the real world
// (signals, the terminal, argv) to the logic.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "common/self_usage.h"
#include "orchestrator/burnin/burnin_command.h"
#include "orchestrator/history_command.h"
#include "orchestrator/run_command.h"
#include "orchestrator/transport/agent_channel.h"
#include "version.h"

namespace {

void OnSignal(int) {
  // The first Ctrl-C asks the run to stop cleanly (agents stopped, run
  // recorded as interrupted); a second one leaves at once.
  if (cc::InterruptFlag().exchange(true)) _exit(cc::kExitInterrupted);
}

void InstallSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

std::string JoinArgv(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

// "a, b,c" -> {"a", "b", "c"}.
std::vector<std::string> SplitStageList(const std::string& csv) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : csv + ",") {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  return out;
}

CLI::App* AddRunCommand(CLI::App& app, cc::RunOptions& run, std::string& stages, std::string& db) {
  auto* cmd = app.add_subcommand("run", "run the checks of an inventory");
  cmd->add_option("inventory", run.inventory_path, "inventory TOML file")->required();
  cmd->add_option("--db", db, "results database");
  cmd->add_option("--stages", stages, "comma-separated stages (default: all; facts always runs)");
  cmd->add_option("--limit", run.limit, "only these nodes (hostlist, e.g. gpu[001-004])");
  cmd->add_option("--fanout", run.fanout, "nodes in flight at once (default: ssh.fanout, 64)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--agent", run.agent_binary, "clustercheck-agent binary to push");
  cmd->add_option("--set", run.settings,
                  "STAGE.KEY=VALUE over the inventory's [stages.STAGE] (repeatable; e.g. "
                  "health.since=1h)");
  cmd->add_flag("--json", run.json, "print the stored run as JSON instead of the summary");
  cmd->add_option("--rerun-failed", run.rerun_failed,
                  "only the nodes and pairs that failed, hung or errored in this run");
  cmd->add_flag("--dry-run", run.dry_run, "print the plan (stages, rounds, time) and stop");
  cmd->add_flag("--no-containment", run.no_containment,
                "run every stage on every node, even those with a cause found earlier");
  return cmd;
}

CLI::App* AddBurnInCommand(CLI::App& app, cc::BurnInOptions& b, std::string& for_text,
                           std::string& db) {
  auto* cmd = app.add_subcommand(
      "burnin", "hours of rounds: every pair met many times, flaky links named by their rate");
  cmd->add_option("inventory", b.run.inventory_path, "inventory TOML file")->required();
  cmd->add_option("--db", db, "results database");
  cmd->add_option("--for", for_text, "how long (2h, 90m, 1h30m); the last round runs out");
  cmd->add_option("--rounds", b.rounds, "how many rounds (with --for: whichever ends first)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--resume", b.resume, "continue this stopped burn-in run");
  cmd->add_option("--limit", b.run.limit, "only these nodes (hostlist, e.g. gpu[001-004])");
  cmd->add_option("--fanout", b.run.fanout, "nodes in flight at once (default: ssh.fanout, 64)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--agent", b.run.agent_binary, "clustercheck-agent binary to push");
  cmd->add_option("--set", b.run.settings, "STAGE.KEY=VALUE over the inventory's settings");
  return cmd;
}

CLI::App* AddReportCommand(CLI::App& app, cc::ReportOptions& report, std::string& db) {
  auto* cmd = app.add_subcommand("report", "re-render a stored run (default: the latest)");
  cmd->add_option("run", report.run_id, "run id");
  cmd->add_option("--db", db, "results database");
  cmd->add_flag("--json", report.json,
                "JSON (run, verdicts, node table) instead of the terminal report");
  cmd->add_option("--html", report.html_path, "also write a self-contained HTML page here");
  cmd->add_option("--junit", report.junit_path, "also write JUnit XML here (CI gating)");
  cmd->add_option("--baseline", report.baseline_run, "compare bandwidth with this run");
  cmd->add_option("--outlier-fraction", report.outlier_fraction,
                  "a pair below this fraction of the median is an outlier (default 0.8)")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_option("--min-busbw", report.min_busbw_gbps, "busbw floor in GB/s (default none)")
      ->check(CLI::NonNegativeNumber);
  return cmd;
}

CLI::App* AddDiffCommand(CLI::App& app, cc::DiffCommandOptions& diff, std::string& db) {
  auto* cmd = app.add_subcommand("diff", "what regressed or recovered between two runs");
  cmd->add_option("a", diff.a, "the earlier run")->required();
  cmd->add_option("b", diff.b, "the later run (default: the latest)");
  cmd->add_option("--db", db, "results database");
  cmd->add_option("--tolerance", diff.tolerance,
                  "relative bandwidth change that counts (default 0.10)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", diff.json, "JSON instead of text");
  return cmd;
}

}  // namespace

// The controller's threads mostly wait on agents, and what a stage frees
// must go back to the system rather than stay resident in glibc's heaps:
// one arena (not 8 per core: memory one thread freed is not reused by
// another's arena), and fixed mmap and trim thresholds (glibc otherwise
// raises them after the first large free, and large buffers then stay in
// the heap). A healthy 128-node run (bench/scale.sh, dial_back) peaked at
// 43 MB instead of 53 with two arenas (64 with glibc's defaults), in about
// the same time and CPU (issue 14). A glibc environment variable, when
// set, rules.
constexpr int kMallocArenas = 1;
constexpr int kMallocThresholdBytes = 128 * 1024;

static void TuneMalloc() {
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, kMallocArenas);
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) {
    mallopt(M_MMAP_THRESHOLD, kMallocThresholdBytes);
  }
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) {
    mallopt(M_TRIM_THRESHOLD, kMallocThresholdBytes);
  }
}

int main(int argc, char** argv) {
  TuneMalloc();
  CLI::App app{"clustercheck: find the bad node or the bad link of a GPU cluster"};
  app.set_version_flag("--version", CLUSTERCHECK_VERSION);
  app.require_subcommand(1);
  std::string db;
  app.add_option("--db", db,
                 "results database (default: ~/.local/state/clustercheck/clustercheck.db)");
  cc::RunOptions run;
  run.environment = cc::ProcessEnvironment;  // the inventory's nodes_from_env
  std::string stages;
  auto* run_cmd = AddRunCommand(app, run, stages, db);
  cc::BurnInOptions burnin;
  burnin.run.environment = cc::ProcessEnvironment;
  std::string burnin_for;
  auto* burnin_cmd = AddBurnInCommand(app, burnin, burnin_for, db);
  cc::ReportOptions report;
  auto* report_cmd = AddReportCommand(app, report, db);
  auto* history_cmd = app.add_subcommand("history", "list stored runs with their verdict counts");
  history_cmd->add_option("--db", db, "results database");
  cc::DiffCommandOptions diff;
  auto* diff_cmd = AddDiffCommand(app, diff, db);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : cc::kExitUsage;
  }
  bool tty = isatty(STDOUT_FILENO) && getenv("NO_COLOR") == nullptr;
  if (*run_cmd) {
    InstallSignalHandlers();
    run.db_path = db;
    run.argv = JoinArgv(argc, argv);
    run.color = tty;
    run.progress_tty = isatty(STDERR_FILENO);
    run.stages = SplitStageList(stages);
    int rc = cc::RunClusterCheck(run);
    cc::WriteSelfUsageIfAsked();  // bench/scale.sh
    return rc;
  }
  if (*burnin_cmd) {
    if (!burnin_for.empty()) {
      auto seconds = cc::ParseBurnInDuration(burnin_for);
      if (!seconds.ok()) {
        std::fprintf(stderr, "clustercheck: %s\n", seconds.status().message().c_str());
        return cc::kExitUsage;
      }
      burnin.for_s = *seconds;
    }
    InstallSignalHandlers();
    burnin.run.db_path = db;
    burnin.run.argv = JoinArgv(argc, argv);
    burnin.run.color = tty;
    burnin.run.progress_tty = isatty(STDERR_FILENO);
    return cc::RunBurnIn(burnin);
  }
  report.db_path = db;
  report.color = tty;
  if (*report_cmd) return cc::ReportCommand(report);
  if (*history_cmd) return cc::HistoryCommand(db, stdout, stderr);
  diff.db_path = db;
  if (*diff_cmd) return cc::DiffCommand(diff);
  return cc::kExitUsage;
}
