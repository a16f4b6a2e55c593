// `nccl`: AllReduce through NCCL as nccl-tests measures it, with the
// transport NCCL really used and the name of the bad node (issue 7;
// docs/architecture.md). Phases ([stages.nccl] phases; all by default):
//   intra    every node alone (all its GPUs), all nodes at once;
//   pairs    round-robin rounds (schedule.h): every pair once, the pairs of
//            a round at once;
//   cluster  one communicator over every node still standing;
//   isolate  when something broke or was slow: suspects of the pair matrix
//            re-paired with known-good nodes (attribution.h), and a broken
//            whole-cluster test searched by group testing (nccl_isolation.h)
//            until the bad node(s) or link are named. How many NCCL runs
//            that took is stored in the run's meta ("nccl") and said in the
//            verdicts.
// Results: NodeResult "intra-node" per node, PairResult "allreduce" per
// pair (busbw GB/s at the largest size as value), NodeResult "*"/"cluster",
// and a Verdict for each node or link the isolation named (analysis.h).
// Nodes without a usable GPU or libnccl are `skip` with the facts' reason.
// No accusation on one test (confirm.h): a failed or hung intra-node,
// cluster or isolation test is run again at once with deadlines
// kRetestDeadlineFactor times longer; failed or hung pairs are run again
// after all the rounds, in QuietRounds, likewise. The attempts are merged
// (Confirm / ConfirmNode: flaky `warn` when they disagree), and the counts
// go into the run meta ("retests.nccl").
// launcher = "mpirun" runs every test through mpirun instead of the agents
// (nccl_mpirun.h); its argv goes into each result's evidence and the meta.
// Under [slurm] steps the same probe runs as a Slurm step of each test's
// nodes (launcher "slurm-steps" in the meta).
// dtypes = ["float", "bf16", "half"]: every test runs each dtype over every
// size in one communicator; each dtype is judged on its own sizes. The
// first dtype's results are the ones above (retests, speed, isolation);
// the others' are recorded beside them for intra-node, pairs and cluster
// as "intra-node.bf16", "allreduce.bf16", "cluster.bf16" (evidence
// "dtype"), and their busbw goes into the meta ("busbw_by_dtype").
#include <algorithm>
#include <chrono>
#include <set>

#include "common/hostlist.h"
#include "common/median.h"
#include "orchestrator/run/confirm_node.h"
#include "orchestrator/run/schedule.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/stages/nccl/attribution.h"
#include "orchestrator/stages/nccl/nccl_isolation.h"
#include "orchestrator/stages/nccl/nccl_launch.h"
#include "orchestrator/stages/nccl/nccl_mpirun.h"
#include "orchestrator/stages/nccl/nccl_spec.h"

namespace cc {
namespace {

// A retest's deadlines are this many times the first attempt's.
constexpr double kRetestDeadlineFactor = 2.5;

std::string Gb(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

class NcclStage : public Stage {
 public:
  std::string name() const override { return "nccl"; }
  Status Run(StageContext& ctx) override;

 private:
  void Members(StageContext& ctx);
  // Runs the groups at once and judges each (slow ones as JudgeBusbw says
  // against the pairs' median, when `slow` is set).
  std::vector<TestJudgement> Batch(StageContext& ctx, const std::vector<NodeGroup>& groups,
                                   double deadline_factor = 1);
  // Batch(), then the broken groups once more with longer deadlines:
  // per group its first judgement and, when it was retested, the retest.
  std::vector<std::pair<TestJudgement, std::optional<TestJudgement>>> ConfirmedBatch(
      StageContext& ctx, const std::vector<NodeGroup>& groups);
  void ConfirmPairs(StageContext& ctx, std::vector<PairResult>* results);
  void Intra(StageContext& ctx);
  // Takes out of active_ the nodes an earlier stage's cause keeps out of
  // the pair, cluster and group tests (containment.h): their pairs are
  // `skip` saying why, and the tests measure the rest. Intra-node tests,
  // which involve no other node, ran before.
  void LeaveOutCauses(StageContext& ctx);
  NodeResult IntraResult(const std::string& node, const TestJudgement& j);
  // Notes j's busbw (and its other dtypes') under `phase` for the meta.
  void NoteBusbw(const std::string& phase, const TestJudgement& j);
  Json BusbwByDtype() const;
  // Other than float alone, the default (whose results and meta stay as
  // they were before dtypes).
  bool DtypesAsked() const { return s_.dtypes != std::vector<std::string>{"float"}; }
  void Pairs(StageContext& ctx);
  void Cluster(StageContext& ctx);
  NodeResult ClusterResult(const TestJudgement& j, bool judge_speed = true) const;
  void Isolate(StageContext& ctx);
  // Tests the matrix's suspects, each with a known-good partner, for a few
  // rounds, adding their outcomes to *in; returns the last attribution.
  Attribution ProbeSuspects(StageContext& ctx, AttributionInput* in, int* probes, int* rounds);
  // Group testing of a broken (or slow) whole-cluster test that the pairs
  // do not explain; an empty result when there is none to do.
  IsolationResult IsolateCluster(StageContext& ctx, const Attribution& a);
  // One round of group tests for IsolateBrokenGroup: their outcomes, with
  // pairs recorded.
  std::vector<Outcome> TestGroups(StageContext& ctx, const std::vector<NodeGroup>& groups,
                                  bool slow_only);
  // The result of an isolation test of `group` (a pair, or a larger group
  // named by its first and last node) and its retest, if any, merged and
  // counted; *why: the speed judgement of the attempt that stands.
  PairResult ConfirmedPair(const NodeGroup& group,
                           const std::pair<TestJudgement, std::optional<TestJudgement>>& tested,
                           std::string* why);
  PairResult MakePair(const std::string& a, const std::string& b, const TestJudgement& j,
                      const std::string& phase);
  Outcome WithSpeed(const TestJudgement& j, std::string* why) const;
  void RecordVerdicts(StageContext& ctx, const Attribution& a, const IsolationResult& iso);

  NcclSettings s_;
  std::vector<NcclMember> members_;
  std::map<std::string, NcclMember*> by_name_;
  std::vector<std::string> active_;  // in inventory order, still testable
  std::map<std::string, Outcome> intra_;
  std::vector<PairOutcome> pair_outcomes_;
  std::vector<double> pair_busbw_;
  double median_ = 0;
  std::optional<TestJudgement> cluster_;
  Outcome cluster_outcome_ = Outcome::kSkip;
  bool cluster_flaky_ = false;
  int tests_ = 0;
  Json meta_ = Json::object();
  RetestCounts retests_;
  // dtype -> phase -> busbw of its passing tests (GB/s)
  std::map<std::string, std::map<std::string, std::vector<double>>> busbw_;
};

void NcclStage::Members(StageContext& ctx) {
  auto facts = ctx.facts();
  // No choice (the nics stage did not run or found none): no NCCL advice.
  const NetworkChoice choice = ctx.network_choice().value_or(NetworkChoice());
  members_.reserve(ctx.fleet().Usable().size());
  for (NodeState* st : ctx.fleet().Usable()) {
    const Node& node = *st->node;
    std::string why;
    Json f = facts.count(node.name) ? facts[node.name] : Json();
    int gpus = GpusToUse(f, s_.gpus_per_node, &why);
    if (gpus <= 0) {
      ctx.Record(NodeCheck("nccl", node.name, "intra-node", Outcome::kSkip, why));
      continue;
    }
    NcclMember m;
    m.state = st;
    m.name = node.name;
    m.gpus = gpus;
    m.library_paths = node.library_paths;
    const Json nccl = f.value("nccl", Json());
    if (nccl.is_object() && nccl.value("path", std::string()) != "") {
      m.library_paths.push_back(nccl["path"].get<std::string>());
    }
    m.env = NcclEnvFor(choice.nccl_env, s_.env, node.env);
    members_.push_back(std::move(m));
  }
  for (NcclMember& m : members_) {
    by_name_[m.name] = &m;
    active_.push_back(m.name);
  }
}

std::vector<TestJudgement> NcclStage::Batch(StageContext& ctx, const std::vector<NodeGroup>& groups,
                                            double deadline_factor) {
  std::vector<std::vector<NcclMember*>> g;
  for (const NodeGroup& names : groups) {
    std::vector<NcclMember*> ms;
    for (const auto& n : names) ms.push_back(by_name_.at(n));
    g.push_back(ms);
  }
  std::vector<std::vector<std::string>> argvs;
  NcclSettings s = s_;
  s.timeout_s *= deadline_factor;
  auto reports = s.launcher == "mpirun" || s.launcher == kNcclSlurmStepsLauncher
                     ? RunNcclMpirunBatch(ctx, g, s, &argvs)
                     : RunNcclBatch(ctx, g, s);
  std::vector<TestJudgement> out;
  for (size_t i = 0; i < reports.size(); ++i) {
    out.push_back(
        JudgeNcclTestByDtype(reports[i], static_cast<int>(groups[i].size()), s_.policy, s_.dtypes));
    if (i < argvs.size() && !argvs[i].empty()) {
      out.back().evidence["mpirun_argv"] = argvs[i];
      Json& mp = meta_["mpirun"];
      if (!mp.is_object()) mp = Json::object();
      mp["launches"] = mp.value("launches", 0) + 1;
      mp["last_argv"] = argvs[i];
    }
    ++tests_;
    ctx.progress().Advance();
  }
  return out;
}

std::vector<std::pair<TestJudgement, std::optional<TestJudgement>>> NcclStage::ConfirmedBatch(
    StageContext& ctx, const std::vector<NodeGroup>& groups) {
  std::vector<std::pair<TestJudgement, std::optional<TestJudgement>>> out;
  std::vector<NodeGroup> again;
  for (TestJudgement& j : Batch(ctx, groups)) {
    if (IsFailOrHang(j.outcome)) again.push_back(groups[out.size()]);
    out.push_back({std::move(j), std::nullopt});
  }
  if (again.empty() || InterruptFlag().load()) return out;
  // The broken groups share no node, so this batch is quiet already.
  auto retests = Batch(ctx, again, kRetestDeadlineFactor);
  size_t k = 0;
  for (auto& [first, retest] : out) {
    if (IsFailOrHang(first.outcome) && k < retests.size()) retest = retests[k++];
  }
  return out;
}

Outcome NcclStage::WithSpeed(const TestJudgement& j, std::string* why) const {
  why->clear();
  if (IsFailOrHang(j.outcome) || !j.busbw) return j.outcome;
  return Worse(j.outcome, JudgeBusbw(*j.busbw, median_, s_, why));
}

NodeResult NcclStage::IntraResult(const std::string& n, const TestJudgement& j) {
  int gpus = by_name_[n]->gpus;
  // One rank moves no data between GPUs: no busbw, only the data check.
  bool one = gpus == 1 && IsPassOrWarn(j.outcome);
  return NodeCheck("nccl", n, NcclCheckName("intra-node", j.dtype), j.outcome,
                   one ? "1 GPU: AllReduce on one rank ran and its data checked out"
                       : std::to_string(gpus) + " GPU(s): " + j.message,
                   j.evidence,
                   j.busbw && gpus > 1 ? Gb(*j.busbw) + " GB/s" : std::to_string(gpus) + " GPU");
}

void NcclStage::Intra(StageContext& ctx) {
  std::vector<NodeGroup> groups;
  for (const auto& n : active_) groups.push_back({n});
  auto js = ConfirmedBatch(ctx, groups);
  std::vector<std::string> still;
  for (size_t i = 0; i < js.size(); ++i) {
    const std::string& n = groups[i][0];
    NodeResult r = IntraResult(n, js[i].first);
    if (js[i].second) {
      r = ConfirmNode(r, IntraResult(n, *js[i].second));
      AddNodeRetest(r, &retests_);
    }
    intra_[n] = r.outcome;
    // A node that cannot run NCCL alone would only break every pair.
    if (IsPassOrWarn(r.outcome)) still.push_back(n);
    ctx.Record(r);
    // The other dtypes, from the attempt that stands.
    const TestJudgement& last = js[i].second ? *js[i].second : js[i].first;
    if (by_name_[n]->gpus > 1) NoteBusbw("intra", last);
    for (const TestJudgement& other : last.other_dtypes) ctx.Record(IntraResult(n, other));
  }
  active_ = still;
}

void NcclStage::LeaveOutCauses(StageContext& ctx) {
  std::map<std::string, std::string> left_out;
  active_ = ctx.containment().JobNodes(active_, &left_out);
  if (left_out.empty()) return;
  ContainedSkips skips = ContainedResults("nccl", left_out, active_, {}, {"allreduce"});
  ctx.Record(std::move(skips.pairs));
  Json contained = Json::object();
  for (const auto& [node, why] : left_out) contained[node] = why;
  meta_["contained"] = std::move(contained);
}

void NcclStage::NoteBusbw(const std::string& phase, const TestJudgement& j) {
  if (!DtypesAsked()) return;
  auto note = [&](const TestJudgement& t) {
    if (t.busbw && IsPassOrWarn(t.outcome)) busbw_[t.dtype][phase].push_back(*t.busbw);
  };
  note(j);
  for (const TestJudgement& o : j.other_dtypes) note(o);
}

Json NcclStage::BusbwByDtype() const {
  Json out = Json::array();
  for (const std::string& d : s_.dtypes) {
    Json e = {{"dtype", d}};
    auto it = busbw_.find(d);
    if (it != busbw_.end()) {
      for (const auto& [phase, bws] : it->second) {
        e[phase == "cluster" ? "cluster_gbps" : phase + "_median_gbps"] = Median(bws);
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

PairResult NcclStage::MakePair(const std::string& a, const std::string& b, const TestJudgement& j,
                               const std::string& phase) {
  PairResult r;
  r.stage = "nccl";
  r.src = a;
  r.dst = b;
  r.check = NcclCheckName("allreduce", j.dtype);
  r.outcome = j.outcome;
  r.state = OutcomeName(j.outcome);
  if (j.busbw) {
    r.value = *j.busbw;
    r.unit = "GB/s";
  }
  r.message = j.message;
  r.evidence = j.evidence;
  r.evidence["phase"] = phase;
  return r;
}

void NcclStage::Pairs(StageContext& ctx) {
  std::vector<PairResult> results;
  std::vector<PairResult> other_dtypes;  // not retested: the first dtype's are
  auto rounds = ctx.PairRounds(active_);
  for (const Round& round : rounds) {
    if (InterruptFlag().load()) break;
    std::vector<NodeGroup> groups;
    for (const auto& [a, b] : round) groups.push_back({a, b});
    auto js = Batch(ctx, groups);
    for (size_t i = 0; i < js.size(); ++i) {
      results.push_back(MakePair(groups[i][0], groups[i][1], js[i], "pairs"));
      NoteBusbw("pairs", js[i]);
      for (const TestJudgement& o : js[i].other_dtypes) {
        other_dtypes.push_back(MakePair(groups[i][0], groups[i][1], o, "pairs"));
      }
    }
  }
  // A burn-in's rounds are its confirmation: one round accuses no one.
  if (!ctx.burnin_round()) ConfirmPairs(ctx, &results);
  for (const PairResult& r : results) {
    if (r.value && !IsFailOrHang(r.outcome)) pair_busbw_.push_back(*r.value);
  }
  median_ = Median(pair_busbw_);
  for (PairResult& r : results) {
    std::string why;
    if (r.value && !IsFailOrHang(r.outcome)) {
      Outcome speed = JudgeBusbw(*r.value, median_, s_, &why);
      if (speed != Outcome::kPass) {
        r.outcome = Worse(r.outcome, speed);
        r.state = "slow";
        r.message += "; " + why;
      }
    }
    // Slow counts as broken for naming: a slow node is slow with everyone.
    pair_outcomes_.push_back({r.src, r.dst, r.state == "slow" ? Outcome::kFail : r.outcome});
  }
  meta_["pairs"] = {
      {"rounds", rounds.size()}, {"tests", results.size()}, {"median_busbw_gbps", median_}};
  results.insert(results.end(), other_dtypes.begin(), other_dtypes.end());
  ctx.Record(std::move(results));
}

// After the burst: each broken pair once more, in rounds where no node is
// in two pairs, with longer deadlines; merged with its first attempt.
void NcclStage::ConfirmPairs(StageContext& ctx, std::vector<PairResult>* results) {
  std::vector<size_t> broken = ToConfirm(*results);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i : broken) pairs.push_back({(*results)[i].src, (*results)[i].dst});
  std::map<std::pair<std::string, std::string>, size_t> index_of;
  for (size_t i : broken) index_of[{(*results)[i].src, (*results)[i].dst}] = i;
  for (const auto& round : QuietRounds(pairs)) {
    if (InterruptFlag().load()) break;
    std::vector<NodeGroup> groups;
    for (const auto& [a, b] : round) groups.push_back({a, b});
    auto js = Batch(ctx, groups, kRetestDeadlineFactor);
    for (size_t k = 0; k < js.size(); ++k) {
      PairResult& r = (*results)[index_of.at(round[k])];
      r = Confirm(r, MakePair(round[k].first, round[k].second, js[k], "retest"));
      retests_.Add(r);
    }
  }
}

NodeResult NcclStage::ClusterResult(const TestJudgement& j, bool judge_speed) const {
  std::string why;
  // The pairs' median is the first dtype's: no yardstick for the others.
  Outcome outcome = judge_speed ? WithSpeed(j, &why) : j.outcome;
  Json evidence = j.evidence;
  evidence["nodes"] = active_;
  return NodeCheck("nccl", "*", NcclCheckName("cluster", j.dtype), outcome,
                   std::to_string(active_.size()) + " nodes (" + FoldHostlist(active_) +
                       "): " + j.message + (why.empty() ? "" : "; " + why),
                   std::move(evidence), j.busbw ? Gb(*j.busbw) + " GB/s" : "");
}

void NcclStage::Cluster(StageContext& ctx) {
  auto js = ConfirmedBatch(ctx, {active_});
  NodeResult r = ClusterResult(js.at(0).first);
  if (js[0].second) {
    r = ConfirmNode(r, ClusterResult(*js[0].second));
    AddNodeRetest(r, &retests_);
    // Flaky: it works, so there is nothing for group testing to find.
    cluster_flaky_ = r.evidence.value("confirmation", "") == kFlaky;
  }
  cluster_outcome_ = r.outcome;
  ctx.Record(r);
  cluster_ = std::move(js[0].second ? *js[0].second : js[0].first);
  NoteBusbw("cluster", *cluster_);
  for (const TestJudgement& o : cluster_->other_dtypes) ctx.Record(ClusterResult(o, false));
}

PairResult NcclStage::ConfirmedPair(
    const NodeGroup& group, const std::pair<TestJudgement, std::optional<TestJudgement>>& tested,
    std::string* why) {
  PairResult r = MakePair(group.front(), group.back(), tested.first, "isolate");
  r.outcome = WithSpeed(tested.first, why);
  if (!tested.second) return r;
  std::string retest_why;
  PairResult again = MakePair(group.front(), group.back(), *tested.second, "isolate");
  again.outcome = WithSpeed(*tested.second, &retest_why);
  r = Confirm(r, again);
  retests_.Add(r);
  if (!IsFlaky(r)) *why = retest_why;
  return r;
}

Attribution NcclStage::ProbeSuspects(StageContext& ctx, AttributionInput* in, int* probes,
                                     int* rounds) {
  Attribution a = AttributeFailures(*in);
  std::vector<PairResult> probe_results;
  for (int round = 0; round < 4 && !InterruptFlag().load(); ++round) {
    auto next = NextProbesToIsolate(*in, a);
    if (next.empty()) break;
    std::vector<NodeGroup> groups;
    for (const auto& [x, y] : next) groups.push_back({x, y});
    auto js = ConfirmedBatch(ctx, groups);
    ++*rounds;
    for (size_t i = 0; i < js.size(); ++i) {
      std::string why;
      PairResult r = ConfirmedPair(groups[i], js[i], &why);
      Outcome o = r.outcome;
      in->pairs.push_back({r.src, r.dst, o == Outcome::kWarn && !why.empty() ? Outcome::kFail : o});
      probe_results.push_back(std::move(r));
      ++*probes;
    }
    a = AttributeFailures(*in);
  }
  ctx.Record(std::move(probe_results));
  return a;
}

std::vector<Outcome> NcclStage::TestGroups(StageContext& ctx, const std::vector<NodeGroup>& groups,
                                           bool slow_only) {
  auto js = ConfirmedBatch(ctx, groups);
  std::vector<Outcome> out;
  std::vector<PairResult> pairs;
  for (size_t i = 0; i < js.size(); ++i) {
    std::string why;
    PairResult r = ConfirmedPair(groups[i], js[i], &why);
    // A flaky group works: nothing for the search to find in it.
    Outcome oc = IsFlaky(r) ? Outcome::kPass : r.outcome;
    if (slow_only && !why.empty()) oc = Outcome::kFail;
    out.push_back(oc);
    if (groups[i].size() == 2) {
      r.outcome = Worse(r.outcome, oc == Outcome::kFail ? Outcome::kWarn : Outcome::kPass);
      pairs.push_back(std::move(r));
    }
  }
  ctx.Record(std::move(pairs));
  return out;
}

IsolationResult NcclStage::IsolateCluster(StageContext& ctx, const Attribution& a) {
  bool cluster_bad = cluster_ && cluster_outcome_ != Outcome::kPass && !cluster_flaky_;
  bool explained = !a.bad_nodes.empty() || !a.bad_links.empty();
  if (!cluster_bad || explained || active_.size() < 2 || InterruptFlag().load()) return {};
  bool slow_only = !IsFailOrHang(cluster_outcome_);
  IsolationOptions o;
  o.known_good.insert(a.known_good.begin(), a.known_good.end());
  o.max_tests = s_.isolate_max_tests;
  return IsolateBrokenGroup(
      active_,
      [&](const std::vector<NodeGroup>& groups) { return TestGroups(ctx, groups, slow_only); }, o);
}

void NcclStage::Isolate(StageContext& ctx) {
  AttributionInput in;
  for (const NcclMember& m : members_) in.nodes.push_back(m.name);
  in.pairs = pair_outcomes_;
  in.intra_node = intra_;
  int probes = 0, probe_rounds = 0;
  Attribution a = ProbeSuspects(ctx, &in, &probes, &probe_rounds);
  IsolationResult iso = IsolateCluster(ctx, a);
  Json tests = Json::array();
  for (const IsolationTest& t : iso.tests) {
    tests.push_back({{"round", t.round},
                     {"purpose", t.purpose},
                     {"nodes", FoldHostlist(t.nodes)},
                     {"size", t.nodes.size()},
                     {"outcome", OutcomeName(t.outcome)}});
  }
  meta_["isolation"] = {{"pair_probes", probes},
                        {"pair_probe_rounds", probe_rounds},
                        {"group_tests", iso.tests.size()},
                        {"group_rounds", iso.rounds},
                        {"runs_after_cluster", probes + static_cast<int>(iso.tests.size())},
                        {"budget_exhausted", iso.budget_exhausted},
                        {"tests", tests}};
  RecordVerdicts(ctx, a, iso);
}

void NcclStage::RecordVerdicts(StageContext& ctx, const Attribution& a,
                               const IsolationResult& iso) {
  int runs = meta_["isolation"]["runs_after_cluster"].get<int>();
  // Say what naming it cost when it took runs beyond the planned phases.
  std::string cost = runs == 0 ? ""
                               : " (isolation: " + std::to_string(runs) + " NCCL run" +
                                     (runs == 1 ? "" : "s") +
                                     (cluster_ ? " after the whole-cluster test)" : ")");
  auto record = [&](const std::string& kind, Outcome o, const std::string& msg,
                    std::vector<std::string> nodes, const std::string& next_step,
                    Json ev = Json::object(), std::vector<NodePair> pairs = {}) {
    Verdict v;
    v.kind = kind;
    v.severity = o;
    v.nodes = std::move(nodes);
    v.pairs = std::move(pairs);
    v.stage = "nccl";
    v.check = "allreduce";
    v.summary = msg + cost;
    ev["isolation_runs"] = runs;
    ev["stage_kind"] = kind;
    v.evidence = std::move(ev);
    v.next_step = next_step;
    ctx.Record(v);
  };
  std::set<std::string> named;
  for (const NodeBlame& b : a.bad_nodes) {
    named.insert(b.node);
    record("bad-node", b.outcome, b.node + " is bad: " + b.reason, {b.node},
           "drain " + b.node + "; check its NICs, GPUs and NCCL env",
           {{"failed_with", b.failed_with}, {"passed_with", b.passed_with}});
  }
  for (const std::string& n : iso.bad_nodes) {
    if (!named.insert(n).second) continue;
    record("bad-node", Outcome::kFail,
           n + " is bad: every NCCL group with it broke, groups without it worked", {n},
           "drain " + n + "; check its NICs, GPUs and NCCL env");
  }
  std::vector<NodePair> links;
  for (const LinkBlame& l : a.bad_links) links.push_back({l.a, l.b});
  links.insert(links.end(), iso.bad_links.begin(), iso.bad_links.end());
  for (const auto& [x, y] : links) {
    record("bad-link", Outcome::kFail,
           x + " and " + y + " fail together but each works with others", {x, y},
           "check the cable, switch ports and routes between " + x + " and " + y, Json::object(),
           {{x, y}});
  }
  std::vector<NodeGroup> unexplained = iso.unexplained;
  for (const auto& [x, y] : a.unexplained) unexplained.push_back({x, y});
  for (const NodeGroup& g : unexplained) {
    record("unexplained", Outcome::kFail,
           "NCCL tests failed, hung or were slow on " + FoldHostlist(g) +
               " and no single node or link explains it",
           g, "read the NCCL logs in the evidence; retest at this scale");
  }
}

Status NcclStage::Run(StageContext& ctx) {
  auto settings = ReadNcclSettings(ctx.inventory().StageSettings("nccl"));
  if (!settings.ok()) return settings.status();
  s_ = *settings;
  // [slurm] steps: every test is a step of the allocation running the MPI
  // probe (nccl_mpirun.h), whatever the launcher setting says.
  if (ctx.inventory().transport == "slurm" && ctx.inventory().slurm.steps) {
    s_.launcher = kNcclSlurmStepsLauncher;
  }
  Members(ctx);
  if (members_.empty()) {
    ctx.Record(NodeCheck("nccl", "*", "cluster", Outcome::kSkip,
                         "no node has a usable GPU and libnccl.so.2 (see each node's intra-node "
                         "result)"));
    return Status::Ok();
  }
  size_t n = members_.size();
  long long estimate = (s_.Has("intra") ? n : 0) + (s_.Has("pairs") ? n * (n - 1) / 2 : 0) + 1;
  ctx.progress().StartStage("nccl", estimate, "tests");
  const Clock::time_point t0 = ctx.clock().Now();
  if (s_.Has("intra")) Intra(ctx);
  LeaveOutCauses(ctx);
  if (s_.Has("pairs") && active_.size() >= 2) Pairs(ctx);
  // Two nodes: their pair already was the whole cluster.
  bool cluster_adds = active_.size() >= 3 || (active_.size() == 2 && !s_.Has("pairs"));
  if (s_.Has("cluster") && cluster_adds && !InterruptFlag().load()) Cluster(ctx);
  if (s_.Has("isolate") && !InterruptFlag().load()) Isolate(ctx);
  ctx.progress().FinishStage();
  double secs = std::chrono::duration<double>(ctx.clock().Now() - t0).count();
  meta_["nodes"] = n;
  meta_["tested"] = active_;
  meta_["tests"] = tests_;
  meta_["seconds"] = secs;
  meta_["sizes"] = s_.sizes;
  meta_["phases"] = s_.phases;
  meta_["launcher"] = s_.launcher;
  std::optional<NetworkChoice> choice = ctx.network_choice();
  meta_["nic_selection"] = choice ? Json(choice->nccl_env) : Json();
  if (cluster_)
    meta_["cluster"] = {{"outcome", OutcomeName(cluster_outcome_)},
                        {"busbw_gbps", cluster_->busbw.value_or(0)}};
  meta_["retests"] = retests_.ToJson();
  if (DtypesAsked()) {
    meta_["dtypes"] = s_.dtypes;
    meta_["busbw_by_dtype"] = BusbwByDtype();
  }
  ctx.RecordRetests("nccl", retests_);
  Status st = ctx.store().SetRunMeta(ctx.run_id(), "nccl", meta_);
  if (!st.ok()) ctx.progress().Note("nccl: summary not stored: " + st.ToString());
  std::string note = "nccl: " + std::to_string(tests_) + " NCCL tests on " + std::to_string(n) +
                     " nodes in " + Gb(secs) + " s";
  if (meta_.contains("isolation")) {
    note += "; isolation " + meta_["isolation"]["runs_after_cluster"].dump() + " runs";
  }
  ctx.progress().Note(note);
  return Status::Ok();
}

}  // namespace

std::unique_ptr<Stage> MakeNcclStage() { return std::make_unique<NcclStage>(); }

}  // namespace cc
