// `mpi`: can Open MPI start a job across the nodes on the selected NIC, and
// how fast do they talk through it (docs/architecture.md, issue 9)? mpirun runs
// here, on the controller, as operators launch jobs: a hostfile of the
// usable nodes by their inventory addresses (the ones this machine's ssh
// and its known_hosts know; one rank each, rank i on the i-th), ssh with
// the inventory's settings (mpi_launch.h), --mca btl_tcp_if_include from
// [stages.mpi] or else the nics stage's data network (its NetworkChoice),
// and oob_tcp_if_include from [stages.mpi] or else a network this machine
// shares with every node (mpi_oob.h; the choice and why go into the meta).
// It runs clustercheck-mpi-probe (mpi/mpi_probe.cc): an exact
// MPI_Allreduce, then ping-pong latency and bandwidth for every pair in the
// NCCL stage's round-robin rounds.
//
// mpirun has an idle deadline (timeout_s without a new line) and an
// overall cap that grows with the rounds (mpirun_deadline.h); at either,
// its process group is killed. After an idle stop the pairs in progress
// are `hang` suspects; pairs the job never reached are `error` (untested). No accusation on one job
// (mpi_confirm.h): when the first job has a fail, hang or error, the whole job runs again with a
// longer deadline and the attempts are merged (flaky when they disagree).
// When ranks of that second job did not start and Open MPI's messages name
// no node, every node is launched alone (one rank, at most
// kIsolationWindow at once), and a node that fails alone is launched alone
// once more: the nodes that fail alone twice are the ones named. A pair
// whose bandwidth is far below the median is measured again alone
// (mpi_speed.h) and called slow only when that agrees. Without mpirun (or
// one that is not Open MPI) or without the probe, the stage is `skip` with
// the reason.
// In a burn-in round the probe meets only the round's pairs (--pairs), and
// nothing is retested or measured again: the rounds are the confirmation.
// Under transport = "slurm" with [slurm] steps = true, every job above is a
// step of the run's allocation instead (srun --mpi=pmix -w NODES, one task
// per node, slurm_steps.h): no mpirun, no ssh; the probe must be at the
// same path on the nodes (or set [stages.mpi] probe), and btl_tcp_if_include
// goes to the ranks as OMPI_MCA_btl_tcp_if_include.
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "common/hostlist.h"
#include "orchestrator/inventory/stage_settings.h"
#include "orchestrator/run/install_layout.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/stages/mpi/mpi_confirm.h"
#include "orchestrator/stages/mpi/mpi_launch.h"
#include "orchestrator/stages/mpi/mpi_spec.h"
#include "orchestrator/stages/mpi/mpi_speed.h"
#include "orchestrator/stages/mpi/mpi_verdict.h"
#include "orchestrator/stages/mpi/mpirun_exec.h"
#include "orchestrator/transport/agent_channel.h"
#include "orchestrator/transport/local_transport.h"
#include "orchestrator/transport/slurm_steps.h"

namespace cc {
namespace {

constexpr double kDefaultTimeoutS = 120;
constexpr double kDefaultPairTimeoutS = 10;
constexpr double kIsolationTimeoutS = 60;
constexpr size_t kIsolationWindow = 16;
// A retest's deadlines are this many times the first attempt's.
constexpr double kRetestDeadlineFactor = 2.5;
// At most this many suspect pairs are measured again alone; past that the
// slowness is no pair's own.
constexpr int kMaxSpeedRetests = 8;

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
    steps_ = ctx.inventory().transport == "slurm" && ctx.inventory().slurm.steps;
    LeaveOutCauses(ctx);
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
  // The usable nodes but those an earlier stage's cause keeps out of the
  // job (containment.h): their launch and pairs are `skip`, saying why, and
  // the job measures the rest of the cluster.
  void LeaveOutCauses(StageContext& ctx) {
    std::vector<std::string> usable;
    std::map<std::string, const Node*> by_name;
    for (NodeState* st : ctx.fleet().Usable()) {
      usable.push_back(st->node->name);
      by_name[st->node->name] = st->node;
    }
    std::map<std::string, std::string> left_out;
    std::vector<std::string> job = ctx.containment().JobNodes(usable, &left_out);
    for (const std::string& n : job) nodes_.push_back(by_name.at(n));
    if (left_out.empty()) return;
    ContainedSkips skips =
        ContainedResults("mpi", left_out, job, {"launch"}, {"latency", "bandwidth"});
    for (NodeResult& r : skips.nodes) ctx.Record(std::move(r));
    ctx.Record(std::move(skips.pairs));
    std::string names;
    for (const auto& [n, why] : left_out) names += (names.empty() ? "" : ", ") + n;
    ctx.progress().Note("mpi: left out of the job (a cause found earlier): " + names);
  }

  // Why the stage cannot run here, "" when it can.
  std::string Preconditions(StageContext& ctx) {
    if (nodes_.size() < 2) return "the mpi stage needs at least two usable nodes";
    if (steps_) {
      job_ = ctx.fleet().transport().AllocationId();
      if (job_.empty()) return "[slurm] steps: no Slurm allocation to start the probe's steps in";
      mpirun_ = "srun";
      version_ = "srun --mpi=" + ctx.inventory().slurm.step_mpi + ", steps of Slurm job " + job_;
      return ProbeProblem();
    }
    mpirun_ = s_.mpirun.empty() ? FindOnPath("mpirun") : s_.mpirun;
    if (mpirun_.empty()) return "no mpirun on PATH (install Open MPI or set [stages.mpi] mpirun)";
    std::string problem = OpenMpiProblem(mpirun_, &version_, ctx.clock());
    if (!problem.empty()) return problem;
    return ProbeProblem();
  }

  std::string ProbeProblem() {
    probe_ = s_.probe.empty() ? HelperProgram("clustercheck-mpi-probe") : s_.probe;
    if (access(probe_.c_str(), X_OK) != 0) {
      return "no clustercheck-mpi-probe at " + probe_ +
             " (built only where Open MPI's headers are; or set [stages.mpi] probe)";
    }
    return "";
  }

  // The job as a Slurm step: one task per host, in rank order.
  Result<std::vector<std::string>> StepArgv(StageContext& ctx, const std::vector<MpiHost>& hosts,
                                            const std::string& tag,
                                            const std::vector<std::string>& probe_args) {
    SlurmStep step;
    step.job = job_;
    for (const MpiHost& h : hosts) step.rank_nodes.push_back(h.node);
    step.hostfile = dir_.path() + "/slurm_hosts" + tag;
    if (Status w = dir_.Write("slurm_hosts" + tag, SrunStepHostfile(step)); !w.ok()) return w;
    if (std::string btl = BtlTcpInterface(ctx, s_.btl_if); !btl.empty()) {
      step.env["OMPI_MCA_btl_tcp_if_include"] = btl;
    }
    step.program = {probe_};
    step.program.insert(step.program.end(), probe_args.begin(), probe_args.end());
    return SrunStepArgv(ctx.inventory().slurm, step);
  }

  Result<std::vector<std::string>> Argv(StageContext& ctx, const std::vector<MpiHost>& hosts,
                                        const std::string& tag,
                                        const std::vector<std::string>& probe_args) {
    if (steps_) return StepArgv(ctx, hosts, tag, probe_args);
    bool ssh = ctx.inventory().transport != "local";
    // Local runs: every "node" is this machine, one slot per node.
    std::string text =
        ssh ? MpiHostfile(hosts) : "localhost slots=" + std::to_string(hosts.size()) + "\n";
    MpirunOptions o;
    o.mpirun = mpirun_;
    Status w = PrepareMpirunFiles(ctx, dir_, hosts, tag, text, &o);
    if (!w.ok()) return w;
    o.np = static_cast<int>(hosts.size());
    o.btl_tcp_if_include = BtlTcpInterface(ctx, s_.btl_if);
    o.oob_tcp_if_include = oob_.value;
    o.extra_args = s_.extra_args;
    o.program = probe_;
    o.program_args = probe_args;
    return MpirunArgv(o);
  }

  std::vector<std::string> ProbeArgs(double pair_timeout_s) const {
    auto num = [](double v) {
      std::string t = std::to_string(v);
      t.erase(t.find_last_not_of('0') + 1);
      if (!t.empty() && t.back() == '.') t.pop_back();
      return t;
    };
    std::vector<std::string> args = {"--bw-bytes",  std::to_string(s_.message_bytes),
                                     "--iters",     std::to_string(s_.iters),
                                     "--timeout-s", num(pair_timeout_s)};
    if (!pair_list_.empty()) args.insert(args.end(), {"--pairs", pair_list_});
    return args;
  }

  // One mpirun of the probe over `hosts` and its judgement: its node
  // results (its pair results are judged from `facts`, MpiPairJudge).
  struct Job {
    std::vector<std::string> argv;
    MpirunRun run;
    MpiRunFacts facts;
    MpiRunJudgement judgement;
  };

  // Runs the whole job with deadlines scaled by `factor`; `isolate`: when
  // ranks did not start and no node is named, launch each node alone.
  Job RunJob(StageContext& ctx, const std::string& tag, double factor, bool isolate) {
    Job job;
    auto argv = Argv(ctx, hosts_, tag, ProbeArgs(s_.pair_timeout_s * factor));
    if (!argv.ok()) {
      job.run.status = argv.status();
      return job;
    }
    job.argv = *argv;
    // A job that keeps printing results is not hung (issue 17): idle
    // deadline timeout_s, overall cap growing with the rounds.
    const MpirunDeadlines deadlines = MpiJobDeadlines(
        static_cast<int>(hosts_.size()), s_.timeout_s * factor, s_.pair_timeout_s * factor);
    job.run = RunMpirun(job.argv, deadlines, ctx.clock());
    if (!job.run.status.ok()) return job;
    MpiRunFacts& f = job.facts;
    for (const Node* n : nodes_) f.nodes.push_back(n->name);
    f.rounds = rank_rounds_;
    f.hung = job.run.hung;
    f.cap_stop = job.run.stop == MpirunStop::kCap;
    f.stop_why = job.run.stop_why;
    f.exit_code = job.run.exit_code;
    f.timeout_s = job.run.stop == MpirunStop::kCap ? deadlines.total_s : deadlines.idle_s;
    // Each line is let go once parsed: at 256 nodes they are 65,280 lines,
    // some 15 MB, and their parse is what stays.
    for (auto* lines : {&job.run.stdout_lines, &job.run.stderr_lines}) {
      for (std::string& l : *lines) {
        AddMpiProbeLine(l, &f.output);
        std::string().swap(l);
      }
      std::vector<std::string>().swap(*lines);
    }
    for (const auto& [rank, h] : f.output.hellos) {
      if (rank < static_cast<int>(nodes_.size()) && !h.host.empty()) {
        aliases_[h.host] = nodes_[rank]->name;
      }
    }
    f.blames = AttributeMpiMessages(f.output.other, aliases_);
    if (isolate && f.output.hellos.size() < nodes_.size() && !AnyNodeNamed(f.blames)) {
      Isolate(ctx, &f.blames);
    }
    // The pairs are judged by the caller, a slice at a time (MpiPairJudge).
    job.judgement.nodes = MpiPairJudge(f).Nodes();
    for (NodeResult& r : job.judgement.nodes) {
      if (r.check != "launch") continue;
      r.evidence["argv"] = job.argv;
      r.evidence["mpirun"] = version_;
      r.evidence["oob"] = oob_.ToJson();
    }
    return job;
  }

  Status Launch(StageContext& ctx) {
    if (ctx.burnin_round() && !NarrowToRoundPairs(ctx)) {
      for (const Node* n : nodes_) {
        Record(ctx, n->name, "launch", Outcome::kSkip,
               "no pair of burn-in round " + std::to_string(ctx.burnin_round()->number) +
                   " among the usable nodes");
      }
      return Status::Ok();
    }
    for (const Node* n : nodes_) {
      // The inventory's address: the one this machine's own ssh uses, whose
      // host key its known_hosts holds. The data network is for the ranks'
      // traffic (btl_tcp_if_include), not for mpirun's ssh.
      hosts_.push_back({n->name, n->address, n->ssh});
      aliases_[n->name] = n->name;
      aliases_[n->address] = n->name;
    }
    if (steps_) {
      ctx.progress().Note("mpi: no mpirun, no ssh: " + version_);
    } else {
      oob_ = ChooseMpiOob(ctx, nodes_, s_.oob_if);
      ctx.progress().Note("mpi: oob_tcp_if_include " +
                          (oob_.value.empty() ? std::string("left to Open MPI") : oob_.value) +
                          ": " + oob_.why);
    }
    Job first = RunJob(ctx, "", 1, false);
    if (!first.run.status.ok()) return first.run.status.WithContext(mpirun_);
    const MpiPairJudge first_pairs(first.facts);
    const PairScan scan = Scan(first_pairs);
    RetestCounts counts;
    Json meta = JobMeta(first);
    // A burn-in's rounds are its confirmation: one round accuses no one.
    if ((scan.retested || MpiNeedsConfirmation({first.judgement.nodes, {}})) &&
        !ctx.burnin_round() && !InterruptFlag().load()) {
      Job second = RunJob(ctx, ".retest", kRetestDeadlineFactor, true);
      if (!second.run.status.ok()) return second.run.status.WithContext(mpirun_);
      // Merged whole: a cluster with failures, whose pairs are held at once.
      MpiRunJudgement judged;
      {
        MpiRunJudgement a{std::move(first.judgement.nodes),
                          first_pairs.Pairs(0, first_pairs.rounds())};
        const MpiPairJudge second_pairs(second.facts);
        MpiRunJudgement b{std::move(second.judgement.nodes),
                          second_pairs.Pairs(0, second_pairs.rounds())};
        judged = MergeMpiAttempts(a, b, &counts);
      }
      meta["retest"] = JobMeta(second);
      SpeedJudged speed =
          JudgeSpeed(ctx, SamplesOf(judged.pairs), [&](size_t i) { return judged.pairs[i]; });
      for (size_t i = 0; i < judged.pairs.size(); ++i) speed.Apply(i, &judged.pairs[i]);
      meta["speed"] = std::move(speed.meta);
      for (NodeResult& r : judged.nodes) ctx.Record(std::move(r));
      ctx.Record(std::move(judged.pairs));
    } else {
      // No retest: the pairs are judged again and stored a slice of rounds
      // at a time, never all held at once (at 256 nodes, 65,280 results).
      SpeedJudged speed =
          JudgeSpeed(ctx, scan.samples, [&](size_t i) { return first_pairs.At(i); });
      meta["speed"] = std::move(speed.meta);
      for (NodeResult& r : first.judgement.nodes) ctx.Record(std::move(r));
      size_t index = 0;
      const size_t step = RoundsPerSlice(first_pairs);
      for (size_t r = 0; r < first_pairs.rounds(); r += step) {
        std::vector<PairResult> slice = first_pairs.Pairs(r, r + step);
        for (PairResult& p : slice) speed.Apply(index++, &p);
        ctx.Record(std::move(slice));
      }
    }
    meta["oob"] = oob_.ToJson();
    ctx.RecordRetests("mpi", counts);
    Status s = ctx.store().SetRunMeta(ctx.run_id(), "mpi", meta);
    (void)s;  // the results above are what matters; meta is for people
    ctx.progress().Advance();
    return Status::Ok();
  }

  // About this many pair results are judged and stored at once.
  static constexpr size_t kResultsPerSlice = 4096;

  static size_t RoundsPerSlice(const MpiPairJudge& judge) {
    if (judge.rounds() == 0) return 1;
    const size_t per_round = std::max<size_t>(1, judge.results() / judge.rounds());
    return std::max<size_t>(1, kResultsPerSlice / per_round);
  }

  // What the first job's pairs say before they are stored: whether any
  // needs a retest, and what the speed rule needs of them.
  struct PairScan {
    bool retested = false;
    std::vector<SpeedSample> samples;
  };

  static PairScan Scan(const MpiPairJudge& judge) {
    PairScan scan;
    size_t index = 0;
    const size_t step = RoundsPerSlice(judge);
    for (size_t r = 0; r < judge.rounds(); r += step) {
      for (const PairResult& p : judge.Pairs(r, r + step)) {
        scan.retested = scan.retested || MpiNeedsConfirmation({{}, {p}});
        if (auto sample = SampleOf(p, index)) scan.samples.push_back(std::move(*sample));
        ++index;
      }
    }
    return scan;
  }

  // A burn-in round's pairs as ranks (rank i is nodes_[i]): the probe meets
  // only those (--pairs) and the judgement expects only those. False when
  // none of the round's pairs has both nodes usable.
  bool NarrowToRoundPairs(const StageContext& ctx) {
    std::vector<std::string> names;
    std::map<std::string, int> rank_of;
    for (const Node* n : nodes_) {
      rank_of[n->name] = static_cast<int>(names.size());
      names.push_back(n->name);
    }
    Round ranks;
    for (const Round& round : ctx.PairRounds(names)) {
      for (const auto& [a, b] : round) {
        int ra = std::min(rank_of[a], rank_of[b]), rb = std::max(rank_of[a], rank_of[b]);
        ranks.push_back({std::to_string(ra), std::to_string(rb)});
        pair_list_ +=
            (pair_list_.empty() ? "" : ",") + ranks.back().first + "-" + ranks.back().second;
      }
    }
    if (ranks.empty()) return false;
    rank_rounds_ = {ranks};
    return true;
  }

  Json JobMeta(const Job& job) const {
    std::vector<std::string> tail = job.facts.output.other;
    if (tail.size() > 80) tail.erase(tail.begin(), tail.end() - 80);
    return {{"argv", job.argv},
            {"mpirun", version_},
            {"hung", job.run.hung},
            {"stop", job.run.stop_why},
            {"exit", job.run.exit_code},
            {"open_mpi_said", tail},
            {"problems", job.facts.output.problems}};
  }

  // The speed judgement of the stage's pair results: the suspects' results
  // as their retests left them; every other bandwidth result is judged not
  // slow (MarkJudged).
  struct SpeedJudged {
    SpeedJudgement sj;
    std::map<size_t, PairResult> changed;  // by result index
    Json meta;

    // The index-th result as judged.
    void Apply(size_t index, PairResult* r) const {
      if (auto it = changed.find(index); it != changed.end()) {
        *r = it->second;
      } else {
        MarkJudged(r, sj);
      }
    }
  };

  // Bandwidth outliers (mpi_speed.h): each suspect is measured again alone,
  // one pair at a time on the whole cluster, and is slow only if that
  // agrees. `result_at(i)`: the i-th result, as judged from the job.
  SpeedJudged JudgeSpeed(StageContext& ctx, const std::vector<SpeedSample>& samples,
                         const std::function<PairResult(size_t)>& result_at) {
    const SpeedRule rule;
    SpeedJudged out;
    out.sj = SlowSuspects(samples, rule);
    const SpeedJudgement& sj = out.sj;
    if (ctx.burnin_round()) {
      // No retest inside a round: a burn-in judges a pair across rounds.
      out.meta = {{"retested", 0}, {"note", "a burn-in round: no speed retests"}};
      return out;
    }
    std::map<size_t, const SpeedSample*> sample_of;
    for (const SpeedSample& s : samples) sample_of[s.index] = &s;
    int retested = 0, slow = 0;
    for (size_t i : sj.suspects) {
      PairResult r = result_at(i);
      if (retested >= kMaxSpeedRetests || InterruptFlag().load()) {
        MarkJudged(&r, sj);
        r.evidence["speed"]["note"] = "a suspect not retested (the retests' cap): not called slow";
        out.changed[i] = std::move(r);
        continue;
      }
      ++retested;
      PairResult alone = MeasureAlone(ctx, r.src, r.dst, retested);
      long long c = ControlPairFor(samples, *sample_of.at(i), sj.median);
      if (c < 0) {
        r = ConfirmSlow(r, alone, sj.median, rule);
      } else {
        const PairResult typical = result_at(static_cast<size_t>(c));
        PairResult control = MeasureAlone(ctx, typical.src, typical.dst, 1000 + retested);
        r = ConfirmSlow(r, alone, sj.median, rule, &control);
      }
      if (r.state == "slow") ++slow;
      out.changed[i] = std::move(r);
    }
    out.meta = {{"median_gbps", sj.median},
                {"suspects", sj.suspects.size()},
                {"retested", retested},
                {"slow", slow},
                {"note", sj.note},
                {"fraction", rule.fraction},
                {"min_measure_s", rule.min_measure_s}};
    return out;
  }

  // The bandwidth of src-dst measured by a job of those two ranks alone.
  PairResult MeasureAlone(StageContext& ctx, const std::string& src, const std::string& dst,
                          int k) {
    PairResult r;
    r.stage = "mpi";
    r.src = src;
    r.dst = dst;
    r.check = "bandwidth";
    r.outcome = Outcome::kError;
    std::vector<MpiHost> two;
    for (const std::string& name : {src, dst}) {
      for (const MpiHost& h : hosts_) {
        if (h.node == name) two.push_back(h);
      }
    }
    auto argv = Argv(ctx, two, ".speed" + std::to_string(k), ProbeArgs(s_.pair_timeout_s));
    if (!argv.ok()) {
      r.message = argv.status().ToString();
      return r;
    }
    MpirunRun run = RunMpirun(*argv, s_.timeout_s, ctx.clock());
    MpiProbeOutput o;
    for (const std::string& l : run.stdout_lines) AddMpiProbeLine(l, &o);
    const MpiPairLine* p = FindMpiPair(o, 0, 1);
    if (!p || !p->ok) {
      r.outcome = run.hung ? Outcome::kHang : Outcome::kFail;
      r.message =
          p ? p->error : "no measurement (mpirun exited " + std::to_string(run.exit_code) + ")";
      return r;
    }
    r.outcome = Outcome::kPass;
    r.value = p->bandwidth_gbps;
    r.unit = "GB/s";
    r.message = std::to_string(p->bandwidth_gbps) + " GB/s";
    return r;
  }

  static bool AnyNodeNamed(const std::vector<MpiBlame>& blames) {
    for (const MpiBlame& b : blames) {
      if (!b.nodes.empty()) return true;
    }
    return false;
  }

  // Runs each of `which` (indices into hosts_) alone, at most
  // kIsolationWindow at once, deadline `limit`; true where it worked.
  std::vector<MpirunRun> RunAlone(StageContext& ctx, const std::vector<size_t>& which,
                                  const std::string& tag, double limit) {
    std::vector<MpirunRun> runs(which.size());
    std::vector<std::vector<std::string>> argvs(which.size());
    for (size_t k = 0; k < which.size(); ++k) {
      auto a = Argv(ctx, {hosts_[which[k]]}, tag + std::to_string(which[k]), {"--timeout-s", "5"});
      if (a.ok()) argvs[k] = *a;
    }
    for (size_t start = 0; start < which.size(); start += kIsolationWindow) {
      std::vector<std::thread> threads;
      for (size_t k = start; k < std::min(which.size(), start + kIsolationWindow); ++k) {
        if (argvs[k].empty()) continue;
        threads.emplace_back([&, k] { runs[k] = RunMpirun(argvs[k], limit, ctx.clock()); });
      }
      for (std::thread& t : threads) t.join();
    }
    return runs;
  }

  static bool StartedAlone(const MpirunRun& run, MpiProbeOutput* o) {
    for (const std::string& l : run.stdout_lines) AddMpiProbeLine(l, o);
    for (const std::string& l : run.stderr_lines) AddMpiProbeLine(l, o);
    return !o->hellos.empty() && o->done.count(0);
  }

  // Launches every node alone; a node that fails alone is launched alone
  // once more with a longer deadline, and a node that fails both times is
  // blamed with what Open MPI said about it.
  void Isolate(StageContext& ctx, std::vector<MpiBlame>* blames) {
    std::vector<size_t> all(hosts_.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    double limit = std::min(s_.timeout_s, kIsolationTimeoutS);
    std::vector<MpirunRun> runs = RunAlone(ctx, all, ".", limit);
    std::vector<size_t> failed;
    std::vector<MpiProbeOutput> outputs(all.size());
    for (size_t i : all) {
      if (!StartedAlone(runs[i], &outputs[i])) failed.push_back(i);
    }
    std::vector<MpirunRun> again = RunAlone(ctx, failed, ".again", limit * kRetestDeadlineFactor);
    for (size_t k = 0; k < failed.size(); ++k) {
      MpiProbeOutput o2;
      size_t i = failed[k];
      if (StartedAlone(again[k], &o2)) {
        ctx.progress().Note("mpi: " + hosts_[i].node +
                            " failed alone once and started alone on the retest: not named");
        continue;
      }
      blames->push_back(AloneBlame(hosts_[i].node, runs[i], outputs[i], limit));
    }
  }

  MpiBlame AloneBlame(const std::string& node, const MpirunRun& run, const MpiProbeOutput& o,
                      double limit) const {
    MpiBlame b;
    b.kind = "alone";
    b.nodes = {node};
    std::string said;
    for (const MpiBlame& x : AttributeMpiMessages(o.other, aliases_)) {
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
    b.message = node + " fails even alone, twice (mpirun -np 1 on it " +
                (run.hung ? "hung for " + std::to_string(static_cast<int>(limit)) + " s"
                          : "exited " + std::to_string(run.exit_code)) +
                ")" + (said.empty() ? "" : ": " + said);
    return b;
  }

  static void Record(StageContext& ctx, const std::string& node, const std::string& check,
                     Outcome o, const std::string& message) {
    ctx.Record(NodeCheck("mpi", node, check, o, message));
  }

  MpiSettings s_;
  std::vector<const Node*> nodes_;
  std::vector<MpiHost> hosts_;  // nodes_ as mpirun reaches them
  // A burn-in round's pairs: the probe's --pairs and the same by rank for
  // the judgement. Empty in a run: every round-robin round.
  std::string pair_list_;
  std::vector<Round> rank_rounds_;
  // Every name a node goes by in Open MPI's messages -> its inventory name.
  std::map<std::string, std::string> aliases_;
  OobChoice oob_;
  std::string mpirun_, probe_, version_;
  bool steps_ = false;  // [slurm] steps: every job is a step of job_
  std::string job_;
  TempDir dir_;
};

}  // namespace

std::unique_ptr<Stage> MakeMpiStage() { return std::make_unique<MpiStage>(); }

}  // namespace cc
