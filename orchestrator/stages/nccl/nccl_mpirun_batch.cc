// RunNcclMpirunBatch (nccl_mpirun.h): one mpirun per group, all at once.
#include <unistd.h>

#include <thread>

#include "agent/nccl_request.h"
#include "orchestrator/run/install_layout.h"
#include "orchestrator/stages/mpi/mpirun_exec.h"
#include "orchestrator/stages/nccl/nccl_mpirun.h"
#include "orchestrator/transport/slurm_steps.h"

namespace cc {
namespace {

// mpirun's own start (ssh, orted) on top of the probe's deadlines.
constexpr double kLaunchSlackS = 45;

std::vector<RankReport> SkipAll(const std::vector<NcclMember*>& group, Outcome o,
                                const std::string& step, const std::string& why) {
  std::vector<RankReport> out;
  for (const std::string& node : NcclRankNodes(group)) {
    RankReport r;
    r.node = node;
    r.outcome = o;
    r.step = step;
    r.reason = why;
    out.push_back(r);
  }
  return out;
}

// One launch (mpirun or srun) of the probe, and its ranks' reports.
std::vector<RankReport> RunAndParse(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& rank_nodes, double timeout,
                                    Clock& clock) {
  MpirunRun run = RunMpirun(argv, timeout, clock);
  NcclMpirunOutput res;
  res.lines = run.stdout_lines;
  res.lines.insert(res.lines.end(), run.stderr_lines.begin(), run.stderr_lines.end());
  res.hung = run.hung;
  res.exit_code = run.exit_code;
  res.timeout_s = timeout;
  if (!run.status.ok()) res.lines.push_back(run.status.ToString());
  return ParseNcclMpirun(rank_nodes, res);
}

}  // namespace

std::vector<std::vector<RankReport>> RunNcclMpirunBatch(
    StageContext& ctx, const std::vector<std::vector<NcclMember*>>& groups, const NcclSettings& s,
    std::vector<std::vector<std::string>>* argvs) {
  std::vector<std::vector<RankReport>> out(groups.size());
  std::vector<std::vector<std::string>> argv(groups.size());
  const bool steps = s.launcher == kNcclSlurmStepsLauncher;
  const std::string job = steps ? ctx.fleet().transport().AllocationId() : "";
  std::string mpirun = steps ? "" : FindOnPath("mpirun"), version;
  std::string probe = HelperProgram(kNcclMpiProbe);
  std::string why =
      steps ? (job.empty() ? "[slurm] steps: no Slurm allocation to start the tests' steps in" : "")
      : mpirun.empty() ? "no mpirun on PATH (launcher = \"mpirun\" needs Open MPI)"
                       : OpenMpiProblem(mpirun, &version, ctx.clock());
  if (why.empty() && access(probe.c_str(), X_OK) != 0) {
    why = "no " + probe +
          " (built only where Open MPI's headers are; launcher = \"mpirun\" "
          "needs it)";
  }
  TempDir dir("clustercheck-nccl");
  if (why.empty() && dir.path().empty()) why = "cannot make a directory in /tmp";
  if (!why.empty()) {
    for (size_t i = 0; i < groups.size(); ++i)
      out[i] = SkipAll(groups[i], Outcome::kSkip, "launch", why);
    if (argvs) *argvs = argv;
    return out;
  }
  const double timeout = NcclAgentDeadlinesS(s) + kLaunchSlackS;
  std::vector<std::thread> threads;
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto& group = groups[i];
    std::vector<MpiHost> hosts;
    std::vector<std::string> addresses;
    std::vector<const Node*> nodes;
    int np = 0;
    for (const NcclMember* m : group) {
      const Node& node = *m->state->node;
      nodes.push_back(&node);
      // The inventory's address: the one this machine's ssh (and its
      // known_hosts) knows; the data network is btl_tcp_if_include's.
      hosts.push_back({node.name, node.address, node.ssh});
      addresses.push_back(hosts.back().address);
      np += m->gpus;
    }
    if (steps) {
      SlurmStep step;
      step.job = job;
      step.rank_nodes = NcclRankNodes(group);
      step.hostfile = dir.path() + "/slurm_hosts." + std::to_string(i);
      if (std::string btl = BtlTcpInterface(ctx, ""); !btl.empty()) {
        step.env["OMPI_MCA_btl_tcp_if_include"] = btl;
      }
      std::string req = NcclMpiRequest(group, s).dump();
      step.program = {probe, "--request-hex", agent::HexEncode(req.data(), req.size())};
      Status w = dir.Write("slurm_hosts." + std::to_string(i), SrunStepHostfile(step));
      auto a =
          w.ok() ? SrunStepArgv(ctx.inventory().slurm, step) : Result<std::vector<std::string>>(w);
      if (!a.ok()) {
        out[i] = SkipAll(group, Outcome::kError, "launch", a.status().ToString());
        continue;
      }
      argv[i] = *a;
      threads.emplace_back([&, i] {
        out[i] = RunAndParse(argv[i], NcclRankNodes(groups[i]), timeout, ctx.clock());
      });
      continue;
    }
    bool local = ctx.inventory().transport == "local";
    MpirunOptions o;
    o.mpirun = mpirun;
    o.map_by = "slot";
    Status w = PrepareMpirunFiles(ctx, dir, hosts, "." + std::to_string(i),
                                  NcclMpiHostfile(group, addresses, local), &o);
    o.np = np;
    o.btl_tcp_if_include = BtlTcpInterface(ctx, "");
    o.oob_tcp_if_include = ChooseMpiOob(ctx, nodes, "").value;
    o.program = probe;
    std::string req = NcclMpiRequest(group, s).dump();
    o.program_args = {"--request-hex", agent::HexEncode(req.data(), req.size())};
    auto a = w.ok() ? MpirunArgv(o) : Result<std::vector<std::string>>(w);
    if (!a.ok()) {
      out[i] = SkipAll(group, Outcome::kError, "launch", a.status().ToString());
      continue;
    }
    argv[i] = *a;
    threads.emplace_back(
        [&, i] { out[i] = RunAndParse(argv[i], NcclRankNodes(groups[i]), timeout, ctx.clock()); });
  }
  for (std::thread& t : threads) t.join();
  if (argvs) *argvs = argv;
  return out;
}

}  // namespace cc
