#include "orchestrator/run_command.h"

#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "common/hostlist.h"
#include "common/self_usage.h"
#include "orchestrator/analysis/analysis.h"
#include "orchestrator/inventory/setting_override.h"
#include "orchestrator/local_next_step.h"
#include "orchestrator/plan.h"
#include "orchestrator/rerun.h"
#include "orchestrator/run/fleet.h"
#include "orchestrator/run/install_layout.h"
#include "orchestrator/run/run_lock.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/stages/stages.h"
#include "orchestrator/store/run_data.h"
#include "orchestrator/transport/local_transport.h"
#include "orchestrator/transport/shell_notice.h"
#include "orchestrator/transport/slurm_transport.h"
#include "orchestrator/transport/ssh_identity_check.h"
#include "orchestrator/transport/ssh_transport.h"
#include "reports/json_report.h"
#include "reports/read_errors.h"
#include "reports/stage_lines.h"
#include "reports/terminal.h"
#include "version.h"

namespace cc {

std::unique_ptr<Transport> MakeTransport(const std::string& name) {
  if (name == "ssh") return std::make_unique<SshTransport>();
  if (name == "local") return std::make_unique<LocalTransport>();
  if (name == "slurm") return std::make_unique<SlurmTransport>();
  return nullptr;
}

namespace {

// Stage names from the command line, else the inventory, else all, in
// run order; a stage the later ones need (StageSpec::always_runs) runs
// whether asked for or not.
Result<std::vector<std::string>> ResolveStages(const RunOptions& o, const Inventory& inv) {
  std::vector<std::string> names = !o.stages.empty()     ? o.stages
                                   : !inv.stages.empty() ? inv.stages
                                                         : DefaultStageNames();
  for (const auto& n : names) {
    if (!FindStageSpec(n)) {
      std::string known;
      for (const StageSpec* s : StageSpecs()) {
        known += std::string(known.empty() ? "" : ", ") + s->name;
      }
      return Status::BadArgument("unknown stage '" + n + "' (known: " + known + ")");
    }
  }
  std::vector<std::string> ordered;
  for (const StageSpec* s : StageSpecs()) {
    bool wanted = std::find(names.begin(), names.end(), s->name) != names.end();
    if (wanted || s->always_runs) ordered.push_back(s->name);
  }
  return ordered;
}

void RecordPrepared(StageContext& ctx, const NodeState& s) {
  NodeRecord rec;
  rec.run_id = ctx.run_id();
  rec.node = s.node->name;
  rec.address = s.node->address;
  rec.reachable = s.usable();
  rec.error = s.usable() ? "" : s.status.ToString();
  Status put = ctx.store().PutNode(rec);
  NodeResult r = NodeCheck(
      "connect", s.node->name, "agent", s.usable() ? Outcome::kPass : OutcomeForNodeError(s.status),
      s.usable()
          ? "agent " + s.hello.value("agent_version", std::string("?")) + " ready in " +
                std::to_string(static_cast<int>(s.prepare_ms)) + " ms" +
                (s.bytes_pushed ? ", pushed " + std::to_string(s.bytes_pushed) + " bytes" : "")
          : s.step + ": " + s.status.ToString(),
      {{"step", s.step},
       {"prepare_ms", s.prepare_ms},
       {"bytes_pushed", s.bytes_pushed},
       {"shell_startup_s", s.shell_startup_s}},
      s.usable() ? "ready" : ErrorKindName(s.status.kind()));
  if (!put.ok()) r.evidence["store_error"] = put.ToString();
  ctx.Record(r);
  for (const auto& w : s.warnings) {
    NodeResult warn = r;
    warn.check = "host_key";
    warn.outcome = Outcome::kWarn;
    warn.value = "off";
    warn.message = w;
    ctx.Record(warn);
  }
  if (!s.shell_noise.empty()) {
    ctx.Record(ShellNotice(s.node->name, s.shell_noise, s.shell_startup_s));
  }
  ctx.progress().Advance();
}

bool HasIdentityFileLine(const std::string& config_path) {
  std::ifstream in(ExpandHome(config_path));
  std::string line;
  while (std::getline(in, line)) {
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos) continue;
    std::string word;
    for (; i < line.size() && !std::isspace(static_cast<unsigned char>(line[i])) && line[i] != '=';
         ++i) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(line[i])));
    }
    if (word == "identityfile") return true;
  }
  return false;
}

// What ssh could authenticate with, as ssh_identity_check.h wants it.
IdentitySources GatherIdentitySources(const Inventory& inv) {
  IdentitySources s;
  for (const auto& n : inv.nodes) s.inventory_identity |= !n.ssh.identity.empty();
  const char* sock = std::getenv("SSH_AUTH_SOCK");
  struct stat st {};
  s.agent_socket = sock != nullptr && *sock != '\0' && ::stat(sock, &st) == 0;
  s.ssh_dir = ExpandHome("~/.ssh");
  for (const auto& name : DefaultIdentityNames()) {
    std::string p = s.ssh_dir + "/" + name;
    if (::access(p.c_str(), R_OK) == 0) s.default_keys.push_back(p);
  }
  std::string config = inv.ssh.config_file.empty() ? "~/.ssh/config" : inv.ssh.config_file;
  s.config_identity_file = HasIdentityFileLine(config);
  return s;
}

// Applies the parts of the command line that need the inventory: --limit, --set,
// --no-containment, the stages, --rerun-failed and --dry-run; checks that ssh has a key to
// offer. Returns the exit code when the command ends here (a bad argument,
// a rerun that answered itself, a plan printed), -1 to go on.
int PrepareRun(const RunOptions& o, Inventory& inv, std::vector<std::string>* stages,
               nlohmann::json* rerun_meta) {
  if (o.no_containment) inv.containment = false;
  if (!o.limit.empty()) {
    Status s = LimitNodes(inv, o.limit);
    if (!s.ok()) {
      std::fprintf(o.err, "clustercheck: --limit: %s\n", s.message().c_str());
      return kExitUsage;
    }
  }
  for (const auto& text : o.settings) {
    Status s = ApplySettingOverride(inv, text);
    if (!s.ok()) {
      std::fprintf(o.err, "clustercheck: %s\n", s.message().c_str());
      return kExitUsage;
    }
  }
  auto resolved = ResolveStages(o, inv);
  if (!resolved.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", resolved.status().message().c_str());
    return kExitUsage;
  }
  *stages = *resolved;
  if (o.rerun_failed != 0) {
    int rc = ApplyRerunFailed(o.db_path.empty() ? DefaultStorePath() : o.db_path, o.rerun_failed,
                              inv, *rerun_meta, o.out, o.err);
    if (rc >= 0) return rc;
  }
  if (o.dry_run) {
    PlanOptions po;
    po.fanout = o.fanout;
    std::fprintf(o.out, "%s", DescribePlan(inv, *stages, po).c_str());
    return kExitOk;
  }
  if (!o.transport && inv.transport == "ssh") {
    std::string problem = NoIdentityProblem(GatherIdentitySources(inv));
    if (!problem.empty()) {
      std::fprintf(o.err, "clustercheck: %s\n", problem.c_str());
      return kExitUsage;
    }
  }
  return -1;
}

// Stores the run's record (inventory, stages, who runs it) and returns its id.
Result<int64_t> BeginRunRecord(Store& store, const RunOptions& o, const Inventory& inv,
                               const std::vector<std::string>& stages,
                               const nlohmann::json& rerun_meta) {
  RunRecord rec;
  rec.started_at = NowIso8601();
  rec.status = "running";
  rec.inventory_path = inv.path;
  rec.inventory_sha256 = inv.sha256;
  rec.inventory_name = inv.name;
  rec.argv = o.argv;
  rec.version = CLUSTERCHECK_VERSION;
  std::vector<std::string> names;
  for (const auto& n : inv.nodes) names.push_back(n.name);
  rec.meta = {{"nodes", names}, {"stages", stages}, {"transport", inv.transport}};
  rec.meta.update(rerun_meta);
  // Who runs it, so that `history` can tell a live run from a killed one
  // (run_liveness.h); the lock's path is added once the lock is held.
  rec.meta["controller"] = ControllerToMeta(ThisController(""));
  return store.BeginRun(rec);
}

// A stored run to continue (RunHooks::resume_run): it must be of the same
// inventory; its round-0 results go (the stages run again now), its
// rounds stay, and it is running again.
Result<int64_t> ResumeRunRecord(Store& store, int64_t run_id, const Inventory& inv) {
  auto run = store.GetRun(run_id);
  if (!run.ok()) return run.status();
  if (run->inventory_sha256 != inv.sha256) {
    return Status::BadArgument("run " + std::to_string(run_id) + " was of another inventory (" +
                               run->inventory_path + ", sha256 " +
                               run->inventory_sha256.substr(0, 12) + "); resume it with that one");
  }
  if (Status s = store.ReopenRun(run_id); !s.ok()) return s;
  store.SetRunMeta(run_id, "controller", ControllerToMeta(ThisController("")));
  return run_id;
}

FleetOptions FleetOptionsFor(const RunOptions& o, const Inventory& inv) {
  FleetOptions fo;
  fo.agent_binary = o.agent_binary.empty() ? HelperProgram("clustercheck-agent") : o.agent_binary;
  // Slurm copies the agent itself (sbcast), once for all nodes.
  fo.push = inv.transport == "ssh";
  fo.fanout = o.fanout > 0 ? o.fanout : inv.ssh.fanout;
  fo.hello_timeout_s = inv.ssh.command_timeout_s;
  return fo;
}

void PrintRunHeader(std::FILE* out, int64_t run_id, const Inventory& inv,
                    const std::vector<std::string>& stages) {
  std::string list;
  for (auto& n : stages) list += (list.empty() ? "" : ",") + n;
  std::fprintf(out, "clustercheck %s: run %lld, %zu nodes, stages %s\n", CLUSTERCHECK_VERSION,
               static_cast<long long>(run_id), inv.nodes.size(), list.c_str());
}

// Connects, pushes and greets every node, each one's result recorded the
// moment it is known. Not ok only when the agent binary cannot be read.
Status ConnectAll(StageContext& ctx, Fleet& fleet, size_t nodes) {
  ctx.progress().StartStage("connect", static_cast<long long>(nodes), "nodes");
  Status prepared = fleet.Prepare([&](const NodeState& s) { RecordPrepared(ctx, s); });
  ctx.progress().FinishStage();
  malloc_trim(0);  // as after each stage (RunStages)
  EndSelfUsageSegment("connect");
  return prepared;
}

// Half the cluster or more must answer for majority judgements to mean
// anything; below that the run says it could not judge.
bool EnoughToJudge(size_t usable, size_t nodes) { return usable > 0 && usable * 2 >= nodes; }

// Runs the stages in order until Ctrl-C; a stage that could not run is an
// error result of its own, and the next stage still runs.
// Stages that ran then get their AfterStages, in run order; the others are
// gone by then (Stage::HasAfterStages).
void RunStages(StageContext& ctx, const std::vector<std::string>& stages) {
  std::vector<std::unique_ptr<Stage>> ran;
  for (const auto& name : stages) {
    if (InterruptFlag().load()) break;
    auto stage = FindStageSpec(name)->make();
    Status s = stage->Run(ctx);
    if (!s.ok()) ctx.Record(NodeCheck(name, "*", "stage", Outcome::kError, s.ToString()));
    if (stage->HasAfterStages()) ran.push_back(std::move(stage));
    stage.reset();
    // What the stage freed sits in the arenas of the fan-out's threads,
    // counted in RSS until the next stage happens to reuse it; glibc gives
    // it back only when asked. Freeing and trimming, a 64-node run peaked
    // at 148 MB instead of 189 (issue 14). Trimmed before the segment
    // ends, so that the next stage's peak starts from what is really held.
    malloc_trim(0);
    EndSelfUsageSegment(name);  // bench/scale.sh: each stage's own peak
  }
  for (auto& stage : ran) {
    if (InterruptFlag().load()) break;
    Status s = stage->AfterStages(ctx);
    if (!s.ok()) ctx.Record(NodeCheck(stage->name(), "*", "after", Outcome::kError, s.ToString()));
  }
}

// The exit code and the stored status of a run whose stages have ended.
int ExitCodeOf(const StageContext& ctx, bool enough, std::string* status) {
  *status = "done";
  if (InterruptFlag().load()) {
    *status = "interrupted";
    return kExitInterrupted;
  }
  if (!enough) return kExitUnjudgeable;
  return ctx.AnyFailedOrHung() ? kExitFailed : kExitOk;
}

}  // namespace

int RunClusterCheck(const RunOptions& o) {
  auto inv = LoadInventory(o.inventory_path, o.environment);
  if (!inv.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", inv.status().message().c_str());
    return kExitUsage;
  }
  std::vector<std::string> stages;
  nlohmann::json rerun_meta = nlohmann::json::object();
  if (int rc = PrepareRun(o, *inv, &stages, &rerun_meta); rc >= 0) return rc;
  std::unique_ptr<Transport> owned;
  Transport* transport = o.transport;
  if (!transport) {
    owned = MakeTransport(inv->transport);
    transport = owned.get();
  }
  std::string db_path = o.db_path.empty() ? DefaultStorePath() : o.db_path;
  auto store = Store::Open(db_path);
  if (!store.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", store.status().ToString().c_str());
    return kExitUsage;
  }
  auto run_id = o.hooks.resume_run ? ResumeRunRecord(**store, o.hooks.resume_run, *inv)
                                   : BeginRunRecord(**store, o, *inv, stages, rerun_meta);
  if (!run_id.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", run_id.status().ToString().c_str());
    return kExitUsage;
  }
  RunLock run_lock(db_path, *run_id);
  if (run_lock.held()) {
    (*store)->SetRunMeta(*run_id, "controller", ControllerToMeta(ThisController(run_lock.path())));
  }

  Fleet fleet(*transport, inv->nodes, FleetOptionsFor(o, *inv));
  std::FILE* progress_out = o.json ? nullptr : o.err;
  Progress progress(progress_out, o.progress_tty, fleet.clock());
  StageContext ctx(*inv, **store, *run_id, fleet, progress);
  if (progress_out) PrintRunHeader(progress_out, *run_id, *inv, stages);

  Status begun = transport->Begin(*inv, FleetOptionsFor(o, *inv).agent_binary);
  if (!begun.ok()) {
    std::fprintf(o.err, "clustercheck: %s: %s\n", inv->transport.c_str(), begun.ToString().c_str());
    (*store)->FinishRun(*run_id, "aborted", kExitUsage);
    return kExitUsage;
  }
  if (progress_out && inv->ssh.dial_back_auto && !transport->LauncherMeta().is_null()) {
    std::fprintf(progress_out,
                 "clustercheck: %zu nodes, more than %zu: their agents dial back to this machine "
                 "(those that cannot speak over ssh; [ssh] dial_back = false keeps all on ssh)\n",
                 inv->nodes.size(), kDialBackAboveNodes);
  }
  Status prepared = ConnectAll(ctx, fleet, inv->nodes.size());
  if (nlohmann::json launcher = transport->LauncherMeta(); !launcher.is_null()) {
    (*store)->SetRunMeta(*run_id, "launcher", launcher);
  }
  if (!prepared.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", prepared.ToString().c_str());
    (*store)->FinishRun(*run_id, "aborted", kExitUsage);
    return kExitUsage;
  }
  (*store)->SetRunMeta(*run_id, "bytes_pushed", fleet.bytes_pushed());
  bool enough = EnoughToJudge(fleet.Usable().size(), inv->nodes.size());
  if (enough) RunStages(ctx, stages);
  int asked =
      enough && o.hooks.after_stages && !InterruptFlag().load() ? o.hooks.after_stages(ctx) : -1;
  fleet.CloseAll();
  std::string status;
  int exit_code = ExitCodeOf(ctx, enough, &status);
  if (asked >= 0 && exit_code == kExitOk) exit_code = asked;
  (*store)->FinishRun(*run_id, status, exit_code);
  for (const auto& e : ctx.store_errors()) {
    std::fprintf(o.err, "clustercheck: store: %s\n", e.c_str());
  }
  auto data = LoadRunData(**store, *run_id, MatrixCheck);
  if (!data.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", data.status().ToString().c_str());
    return exit_code;
  }
  if (o.json) {
    // The document `report --json` prints for this run (README "JSON of a
    // run"), from what was stored, so scripts read one shape.
    Status s = WriteReportJson(FileWriter(o.out), *data, AnalyzeStoredRun(*data),
                               PairRowsOf(**store, *run_id));
    if (!s.ok()) std::fprintf(o.err, "clustercheck: %s\n", s.ToString().c_str());
  } else {
    TerminalOptions to;
    to.color = o.color;
    to.db_path = db_path;
    std::fprintf(o.out, "%s", RenderTerminal(*data, to).c_str());
    if (o.hooks.after_report) o.hooks.after_report(o.out);
    // On one machine every stage gets its line (a newcomer's first run).
    if (inv->transport == "local") std::fprintf(o.out, "\n%s", RenderStageLines(*data).c_str());
    std::string example = ExampleInventoryPath(inv->path);
    std::fprintf(
        o.out, "%s",
        NextStepAfterLocalRun(inv->path, inv->transport, ::access(example.c_str(), R_OK) == 0)
            .c_str());
  }
  return exit_code;
}

}  // namespace cc
