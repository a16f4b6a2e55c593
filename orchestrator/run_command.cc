#include "orchestrator/run_command.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "common/hostlist.h"
#include "orchestrator/local_next_step.h"
#include "orchestrator/plan.h"
#include "orchestrator/rerun.h"
#include "orchestrator/run/fleet.h"
#include "orchestrator/run/install_layout.h"
#include "orchestrator/run/run_lock.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/store/run_data.h"
#include "orchestrator/transport/local_transport.h"
#include "orchestrator/transport/shell_notice.h"
#include "orchestrator/transport/ssh_identity_check.h"
#include "orchestrator/transport/ssh_transport.h"
#include "reports/stage_lines.h"
#include "reports/terminal.h"
#include "version.h"

namespace cc {

std::unique_ptr<Transport> MakeTransport(const std::string& name) {
  if (name == "ssh") return std::make_unique<SshTransport>();
  if (name == "local") return std::make_unique<LocalTransport>();
  return nullptr;
}

namespace {

// Stage names from the command line, else the inventory, else all; facts
// always runs first because every later stage reads its facts.
Result<std::vector<std::string>> ResolveStages(const RunOptions& o, const Inventory& inv) {
  std::vector<std::string> names = !o.stages.empty()     ? o.stages
                                   : !inv.stages.empty() ? inv.stages
                                                         : DefaultStageNames();
  for (const auto& n : names) {
    if (!FindStage(n)) {
      std::string known;
      for (const auto& s : Stages()) known += std::string(known.empty() ? "" : ", ") + s.name;
      return Status::BadArgument("unknown stage '" + n + "' (known: " + known + ")");
    }
  }
  std::vector<std::string> ordered;
  for (const auto& s : Stages()) {
    bool wanted = std::find(names.begin(), names.end(), s.name) != names.end();
    if (wanted || std::string(s.name) == "facts") ordered.push_back(s.name);
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

int ExitCodeFor(const StageContext& ctx) { return ctx.AnyFailedOrHung() ? kExitFailed : kExitOk; }

}  // namespace

int RunClusterCheck(const RunOptions& o) {
  auto inv = LoadInventory(o.inventory_path);
  if (!inv.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", inv.status().message().c_str());
    return kExitUsage;
  }
  if (!o.limit.empty()) {
    Status s = LimitNodes(*inv, o.limit);
    if (!s.ok()) {
      std::fprintf(o.err, "clustercheck: --limit: %s\n", s.message().c_str());
      return kExitUsage;
    }
  }
  auto stages = ResolveStages(o, *inv);
  if (!stages.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", stages.status().message().c_str());
    return kExitUsage;
  }
  nlohmann::json rerun_meta = nlohmann::json::object();
  if (o.rerun_failed != 0) {
    int rc = ApplyRerunFailed(o.db_path.empty() ? DefaultStorePath() : o.db_path, o.rerun_failed,
                              *inv, rerun_meta, o.out, o.err);
    if (rc >= 0) return rc;
  }
  if (o.dry_run) {
    PlanOptions po;
    po.fanout = o.fanout;
    std::fprintf(o.out, "%s", DescribePlan(*inv, *stages, po).c_str());
    return kExitOk;
  }
  if (!o.transport && inv->transport == "ssh") {
    std::string problem = NoIdentityProblem(GatherIdentitySources(*inv));
    if (!problem.empty()) {
      std::fprintf(o.err, "clustercheck: %s\n", problem.c_str());
      return kExitUsage;
    }
  }
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
  RunRecord rec;
  rec.started_at = NowIso8601();
  rec.status = "running";
  rec.inventory_path = inv->path;
  rec.inventory_sha256 = inv->sha256;
  rec.inventory_name = inv->name;
  rec.argv = o.argv;
  rec.version = CLUSTERCHECK_VERSION;
  std::vector<std::string> names;
  for (const auto& n : inv->nodes) names.push_back(n.name);
  rec.meta = {{"nodes", names}, {"stages", *stages}, {"transport", inv->transport}};
  rec.meta.update(rerun_meta);
  // Who runs it, so that `history` can tell a live run from a killed one
  // (run_liveness.h); the lock's path is added once the lock is held.
  rec.meta["controller"] = ControllerToMeta(ThisController(""));
  auto run_id = (*store)->BeginRun(rec);
  if (!run_id.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", run_id.status().ToString().c_str());
    return kExitUsage;
  }
  RunLock run_lock(db_path, *run_id);
  if (run_lock.held()) {
    (*store)->SetRunMeta(*run_id, "controller", ControllerToMeta(ThisController(run_lock.path())));
  }

  FleetOptions fo;
  fo.agent_binary = o.agent_binary.empty() ? HelperProgram("clustercheck-agent") : o.agent_binary;
  fo.push = inv->transport != "local";
  fo.fanout = o.fanout > 0 ? o.fanout : inv->ssh.fanout;
  fo.hello_timeout_s = inv->ssh.command_timeout_s;
  Fleet fleet(*transport, inv->nodes, fo);
  std::FILE* progress_out = o.json ? nullptr : o.err;
  Progress progress(progress_out, o.progress_tty);
  StageContext ctx(*inv, **store, *run_id, fleet, progress);
  if (progress_out) {
    std::fprintf(progress_out, "clustercheck %s: run %lld, %zu nodes, stages %s\n",
                 CLUSTERCHECK_VERSION, static_cast<long long>(*run_id), inv->nodes.size(),
                 [&] {
                   std::string s;
                   for (auto& n : *stages) s += (s.empty() ? "" : ",") + n;
                   return s;
                 }()
                     .c_str());
  }

  progress.StartStage("connect", static_cast<long long>(inv->nodes.size()), "nodes");
  Status prepared = fleet.Prepare([&](const NodeState& s) { RecordPrepared(ctx, s); });
  progress.FinishStage();
  int exit_code = kExitOk;
  if (!prepared.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", prepared.ToString().c_str());
    (*store)->FinishRun(*run_id, "aborted", kExitUsage);
    return kExitUsage;
  }
  (*store)->SetRunMeta(*run_id, "bytes_pushed", fleet.bytes_pushed());
  size_t usable = fleet.Usable().size();
  // Half the cluster or more must answer for majority judgements to mean
  // anything; below that the run says it could not judge.
  bool enough = usable > 0 && usable * 2 >= inv->nodes.size();
  if (enough) {
    for (const auto& name : *stages) {
      if (InterruptFlag().load()) break;
      auto stage = FindStage(name)->make();
      Status s = stage->Run(ctx);
      if (!s.ok()) ctx.Record(NodeCheck(name, "*", "stage", Outcome::kError, s.ToString()));
    }
  }
  fleet.CloseAll();
  std::string status = "done";
  if (InterruptFlag().load()) {
    exit_code = kExitInterrupted;
    status = "interrupted";
  } else if (!enough) {
    exit_code = kExitUnjudgeable;
  } else {
    exit_code = ExitCodeFor(ctx);
  }
  (*store)->FinishRun(*run_id, status, exit_code);
  for (const auto& e : ctx.store_errors()) {
    std::fprintf(o.err, "clustercheck: store: %s\n", e.c_str());
  }
  auto data = LoadRunData(**store, *run_id);
  if (!data.ok()) {
    std::fprintf(o.err, "clustercheck: %s\n", data.status().ToString().c_str());
    return exit_code;
  }
  if (o.json) {
    std::fprintf(o.out, "%s\n", RunDataToJson(*data).dump(2).c_str());
  } else {
    TerminalOptions to;
    to.color = o.color;
    to.db_path = db_path;
    std::fprintf(o.out, "%s", RenderTerminal(*data, to).c_str());
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
