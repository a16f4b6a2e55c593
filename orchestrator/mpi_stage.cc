// `mpi`: can Open MPI start a job across the nodes on the selected NIC, and
// how fast do they talk through it (DESIGN.md step 5, issue 9)? mpirun runs
// here, on the controller, as operators launch jobs: a hostfile of the
// usable nodes (one rank each, rank i on the i-th), ssh with the
// inventory's settings (mpi_launch.h), --mca btl_tcp_if_include /
// oob_tcp_if_include from [stages.mpi] or else the nics stage's choice
// (selection "mpi_mca"). It runs clustercheck-mpi-probe (mpi/mpi_probe.cc):
// an exact MPI_Allreduce, then ping-pong latency and bandwidth for every
// pair in the NCCL stage's round-robin rounds.
//
// mpirun has a deadline; at it, its process group is killed and what was
// not reported is `hang`. When ranks did not start and Open MPI's messages
// name no node, every node is launched alone (one rank, at most
// kIsolationWindow at once): the nodes that fail alone are the ones named.
// Without mpirun (or one that is not Open MPI) or without the probe, the
// stage is `skip` with the reason.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "common/hostlist.h"
#include "orchestrator/agent_channel.h"
#include "orchestrator/local_transport.h"
#include "orchestrator/mpi_launch.h"
#include "orchestrator/mpi_verdict.h"
#include "orchestrator/mpirun_exec.h"
#include "orchestrator/run_command.h"
#include "orchestrator/stage_settings.h"
#include "orchestrator/stages_decl.h"

namespace cc {
namespace {

constexpr double kDefaultTimeoutS = 120;
constexpr double kDefaultPairTimeoutS = 10;
constexpr double kIsolationTimeoutS = 60;
constexpr size_t kIsolationWindow = 16;

struct MpiSettings {
  std::string mpirun;  // "" = search PATH
  std::string probe;   // "" = beside this binary
  double timeout_s = kDefaultTimeoutS;
  double pair_timeout_s = kDefaultPairTimeoutS;
  long long message_bytes = 4 << 20;
  int iters = 20;
  std::string btl_if, oob_if;
  std::vector<std::string> extra_args;
};

Result<MpiSettings> ReadSettings(const Json& j) {
  MpiSettings s;
  s.mpirun = j.value("mpirun", "");
  s.probe = j.value("probe", "");
  s.timeout_s = j.value("timeout_s", kDefaultTimeoutS);
  s.pair_timeout_s = j.value("pair_timeout_s", kDefaultPairTimeoutS);
  s.iters = j.value("iters", 20);
  s.btl_if = j.value("btl_tcp_if_include", "");
  s.oob_if = j.value("oob_tcp_if_include", "");
  s.extra_args = j.value("extra_args", std::vector<std::string>{});
  if (j.contains("message_size")) {
    auto b = ParseByteSize(j["message_size"].get<std::string>());
    if (!b.ok()) return b.status().WithContext("[stages.mpi] message_size");
    s.message_bytes = static_cast<long long>(*b);
  }
  return s;
}

class MpiStage : public Stage {
 public:
  std::string name() const override { return "mpi"; }

  Status Run(StageContext& ctx) override {
    auto settings = ReadSettings(ctx.inventory().StageSettings("mpi"));
    if (!settings.ok()) return settings.status();
    s_ = *settings;
    for (NodeState* st : ctx.fleet().Usable()) nodes_.push_back(st->node);
    std::string why_not = Preconditions(ctx);
    if (!why_not.empty()) {
      for (const Node* n : nodes_) Record(ctx, n->name, "launch", Outcome::kSkip, why_not);
      return Status::Ok();
    }
    if (dir_.path().empty()) return Status::Io("cannot make a temporary directory in /tmp");
    ctx.progress().StartStage("mpi", 1, "mpirun");
    Status st = Launch(ctx);
    ctx.progress().FinishStage();
    return st;
  }

 private:
  // Why the stage cannot run here, "" when it can.
  std::string Preconditions(StageContext& ctx) {
    if (nodes_.size() < 2) return "the mpi stage needs at least two usable nodes";
    mpirun_ = s_.mpirun.empty() ? FindOnPath("mpirun") : s_.mpirun;
    if (mpirun_.empty()) return "no mpirun on PATH (install Open MPI or set [stages.mpi] mpirun)";
    std::string problem = OpenMpiProblem(mpirun_, &version_);
    if (!problem.empty()) return problem;
    probe_ = s_.probe.empty() ? HelperProgram("clustercheck-mpi-probe") : s_.probe;
    if (access(probe_.c_str(), X_OK) != 0) {
      return "no clustercheck-mpi-probe at " + probe_ +
             " (built only where Open MPI's headers are; or set [stages.mpi] probe)";
    }
    (void)ctx;
    return "";
  }

  Result<std::vector<std::string>> Argv(StageContext& ctx, const std::vector<MpiHost>& hosts,
                                        const std::string& tag,
                                        const std::vector<std::string>& probe_args) {
    bool ssh = ctx.inventory().transport != "local";
    // Local runs: every "node" is this machine, one slot per node.
    std::string text = ssh ? MpiHostfile(hosts)
                           : "localhost slots=" + std::to_string(hosts.size()) + "\n";
    MpirunOptions o;
    o.mpirun = mpirun_;
    Status w = PrepareMpirunFiles(ctx, dir_, hosts, tag, text, &o);
    if (!w.ok()) return w;
    o.np = static_cast<int>(hosts.size());
    o.btl_tcp_if_include = MpiInterface(ctx, s_.btl_if, "btl_tcp_if_include");
    o.oob_tcp_if_include = MpiInterface(ctx, s_.oob_if, "oob_tcp_if_include");
    o.extra_args = s_.extra_args;
    o.program = probe_;
    o.program_args = probe_args;
    return MpirunArgv(o);
  }

  std::vector<std::string> ProbeArgs() const {
    auto num = [](double v) {
      std::string t = std::to_string(v);
      t.erase(t.find_last_not_of('0') + 1);
      if (!t.empty() && t.back() == '.') t.pop_back();
      return t;
    };
    return {"--bw-bytes", std::to_string(s_.message_bytes), "--iters", std::to_string(s_.iters),
            "--timeout-s", num(s_.pair_timeout_s)};
  }

  Status Launch(StageContext& ctx) {
    std::vector<MpiHost> hosts;
    std::map<std::string, std::string> aliases;
    for (const Node* n : nodes_) {
      hosts.push_back({n->name, MpiAddressOf(ctx, *n), n->ssh});
      aliases[n->name] = n->name;
      aliases[hosts.back().address] = n->name;
      aliases[n->address] = n->name;
    }
    auto argv = Argv(ctx, hosts, "", ProbeArgs());
    if (!argv.ok()) return argv.status();
    MpirunRun run = RunMpirun(*argv, s_.timeout_s);
    if (!run.status.ok()) return run.status.WithContext(mpirun_);
    MpiRunFacts f;
    for (const Node* n : nodes_) f.nodes.push_back(n->name);
    f.hung = run.hung;
    f.exit_code = run.exit_code;
    f.timeout_s = s_.timeout_s;
    for (const std::string& l : run.stdout_lines) AddMpiProbeLine(l, &f.output);
    for (const std::string& l : run.stderr_lines) AddMpiProbeLine(l, &f.output);
    for (const auto& [rank, h] : f.output.hellos) {
      if (rank < static_cast<int>(nodes_.size()) && !h.host.empty()) aliases[h.host] = nodes_[rank]->name;
    }
    f.blames = AttributeMpiMessages(f.output.other, aliases);
    if (f.output.hellos.size() < nodes_.size() && !AnyNodeNamed(f.blames)) {
      Isolate(ctx, hosts, aliases, &f.blames);
    }
    MpiRunJudgement j = JudgeMpiRun(f);
    for (NodeResult& r : j.nodes) {
      if (r.check == "launch") {
        r.evidence["argv"] = *argv;
        r.evidence["mpirun"] = version_;
      }
      ctx.Record(std::move(r));
    }
    ctx.Record(std::move(j.pairs));
    std::vector<std::string> tail = f.output.other;
    if (tail.size() > 80) tail.erase(tail.begin(), tail.end() - 80);
    Json meta = {{"argv", *argv},       {"mpirun", version_},    {"hung", run.hung},
                 {"exit", run.exit_code}, {"open_mpi_said", tail}, {"problems", f.output.problems}};
    Status s = ctx.store().SetRunMeta(ctx.run_id(), "mpi", meta);
    (void)s;  // the results above are what matters; meta is for people
    ctx.progress().Advance();
    return Status::Ok();
  }

  static bool AnyNodeNamed(const std::vector<MpiBlame>& blames) {
    for (const MpiBlame& b : blames) {
      if (!b.nodes.empty()) return true;
    }
    return false;
  }

  // Launches every node alone; a node that fails alone is blamed with what
  // Open MPI said about it.
  void Isolate(StageContext& ctx, const std::vector<MpiHost>& hosts,
               const std::map<std::string, std::string>& aliases, std::vector<MpiBlame>* blames) {
    std::vector<MpirunRun> runs(hosts.size());
    std::vector<std::vector<std::string>> argvs(hosts.size());
    for (size_t i = 0; i < hosts.size(); ++i) {
      auto a = Argv(ctx, {hosts[i]}, "." + std::to_string(i), {"--timeout-s", "5"});
      if (a.ok()) argvs[i] = *a;
    }
    double limit = std::min(s_.timeout_s, kIsolationTimeoutS);
    for (size_t start = 0; start < hosts.size(); start += kIsolationWindow) {
      std::vector<std::thread> threads;
      for (size_t i = start; i < std::min(hosts.size(), start + kIsolationWindow); ++i) {
        if (argvs[i].empty()) continue;
        threads.emplace_back([&, i] { runs[i] = RunMpirun(argvs[i], limit); });
      }
      for (std::thread& t : threads) t.join();
    }
    for (size_t i = 0; i < hosts.size(); ++i) {
      MpiProbeOutput o;
      for (const std::string& l : runs[i].stdout_lines) AddMpiProbeLine(l, &o);
      for (const std::string& l : runs[i].stderr_lines) AddMpiProbeLine(l, &o);
      if (!o.hellos.empty() && o.done.count(0)) continue;  // fine alone
      MpiBlame b;
      b.kind = "alone";
      b.nodes = {hosts[i].node};
      std::string said;
      for (const MpiBlame& x : AttributeMpiMessages(o.other, aliases)) {
        said += (said.empty() ? "" : "; ") + x.message;
      }
      if (said.empty()) {
        for (const std::string& l : o.other) {
          if (l.find_first_not_of("- ") == std::string::npos) continue;
          said += (said.empty() ? "Open MPI: \"" : " ") + l;
          if (said.size() > 400) break;
        }
        if (!said.empty()) said += "\"";
      }
      b.message = hosts[i].node + " fails even alone (mpirun -np 1 on it " +
                  (runs[i].hung ? "hung for " + std::to_string(static_cast<int>(limit)) + " s"
                                : "exited " + std::to_string(runs[i].exit_code)) +
                  ")" + (said.empty() ? "" : ": " + said);
      blames->push_back(b);
    }
  }

  static void Record(StageContext& ctx, const std::string& node, const std::string& check,
                     Outcome o, const std::string& message) {
    ctx.Record(NodeCheck("mpi", node, check, o, message));
  }

  MpiSettings s_;
  std::vector<const Node*> nodes_;
  std::string mpirun_, probe_, version_;
  TempDir dir_;
};

}  // namespace

std::unique_ptr<Stage> MakeMpiStage() { return std::make_unique<MpiStage>(); }

}  // namespace cc
