#include "orchestrator/burnin/burnin_command.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <mutex>

#include "common/json_read.h"
#include "orchestrator/burnin/burnin_plan.h"
#include "orchestrator/burnin/burnin_stats.h"
#include "orchestrator/burnin/burnin_text.h"
#include "orchestrator/burnin/burnin_verdicts.h"
#include "orchestrator/inventory/setting_override.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/stages/stages.h"
#include "orchestrator/transport/agent_channel.h"

namespace cc {
namespace {

using nlohmann::json;

// The pair stages a burn-in runs every round, on the round's pairs.
const char* const kLoopStages[] = {"nics", "ports", "nccl", "mpi"};
// Extra AllReduces per size, each checked exactly, when the inventory does
// not set nccl.check_iters: the burn-in checks the data of every iteration
// it times.
constexpr int kBurnInCheckIters = 20;

bool IsLoopStage(const std::string& name) {
  return std::find(std::begin(kLoopStages), std::end(kLoopStages), name) != std::end(kLoopStages);
}

// What a burn-in remembers in its run's meta ("burnin"), so that a report,
// a diff and --resume can read it back.
struct BurnInState {
  BurnInLimit limit;
  int rounds_done = 0;
  std::map<int, double> round_end_s;
  double max_failure_rate = 0;
  std::vector<std::string> loop_stages;

  json ToJson() const {
    json ends = json::object();
    for (const auto& [round, s] : round_end_s) ends[std::to_string(round)] = s;
    return {{"for_s", limit.seconds ? json(*limit.seconds) : json()},
            {"rounds", limit.rounds ? json(*limit.rounds) : json()},
            {"rounds_done", rounds_done},
            {"elapsed_s", round_end_s.empty() ? 0.0 : round_end_s.rbegin()->second},
            {"round_end_s", ends},
            {"max_failure_rate", max_failure_rate},
            {"stages", loop_stages}};
  }
  // What ToJson wrote; what is not of its shape (a meta another version
  // stored) is taken as absent.
  static BurnInState FromJson(const json& j) {
    BurnInState s;
    if (JsonMember(j, "for_s").is_number()) s.limit.seconds = JsonNumber(j, "for_s");
    if (JsonMember(j, "rounds").is_number()) s.limit.rounds = JsonCount(j, "rounds");
    s.rounds_done = JsonCount(j, "rounds_done");
    for (const auto& [round, end] : JsonObject(j, "round_end_s").items()) {
      int n = 0;
      auto [rest, err] = std::from_chars(round.data(), round.data() + round.size(), n);
      if (err == std::errc() && rest == round.data() + round.size() && end.is_number()) {
        s.round_end_s[n] = end.get<double>();
      }
    }
    s.max_failure_rate = JsonNumber(j, "max_failure_rate");
    s.loop_stages = JsonStrings(j, "stages");
    return s;
  }
};

std::vector<std::string> UsableNames(Fleet& fleet) {
  std::vector<std::string> names;
  for (NodeState* s : fleet.Usable()) names.push_back(s->node->name);
  return names;
}

// The inventory a round's stages read: NCCL pairs every round, the whole
// cluster on the rounds that interleave it, the data checked every
// iteration unless the inventory says otherwise.
Inventory RoundInventory(const Inventory& base, bool whole_cluster) {
  Inventory inv = base;
  ApplySettingOverride(
      inv, whole_cluster ? R"(nccl.phases=["pairs","cluster"])" : R"(nccl.phases=["pairs"])");
  if (!base.StageSettings("nccl").contains("check_iters")) {
    ApplySettingOverride(inv, "nccl.check_iters=" + std::to_string(kBurnInCheckIters));
  }
  return inv;
}

// Every usable node's GPU readings and IB counters after a round.
void SampleHealth(StageContext& ctx) {
  double timeout_s = ctx.inventory().ssh.command_timeout_s;
  ctx.fleet().ForEach({}, [&](NodeState& s) {
    json args{{"library_paths", s.node->library_paths}, {"sections", {"gpu", "ib"}}};
    auto call = s.agent->Call("health", args, Deadline::InSeconds(ctx.clock(), timeout_s));
    json h = call.ok() ? call->Find("health") : json();
    if (!h.is_object()) {
      Status st = call.ok() ? Status::Protocol("agent answered without health") : call.status();
      ctx.Record(NodeCheck("health", s.node->name, "sample",
                           st.Is(ErrorKind::kTimeout) ? Outcome::kHang : Outcome::kError,
                           st.ToString()));
      return;
    }
    json sample = HealthSampleOf(h);
    std::string message = std::to_string(sample["gpus"].size()) + " GPUs, " +
                          std::to_string(sample["counters"].size()) + " counters read";
    ctx.Record(NodeCheck("health", s.node->name, "sample", Outcome::kPass, message, sample));
  });
}

// What one round's pair results say: whether it tested any pair, and how
// many failed or hung.
struct RoundTally {
  bool tested = false;
  int failures = 0;
};

RoundTally TallyOf(const std::vector<PairResult>& rs) {
  RoundTally t;
  for (const PairResult& r : rs) {
    t.tested |= r.outcome != Outcome::kSkip;
    t.failures += IsFailOrHang(r.outcome);
  }
  return t;
}

BurnInSummary SummaryOf(Store& store, int64_t run_id, const BurnInState& state,
                        const std::vector<std::string>& nodes) {
  BurnInRounds in;
  in.nodes = nodes;
  auto node_results = store.GetRoundNodeResults(run_id);
  auto pair_results = store.GetRoundPairResults(run_id);
  if (node_results.ok()) in.node_results = std::move(*node_results);
  if (pair_results.ok()) in.pair_results = std::move(*pair_results);
  in.round_end_s = state.round_end_s;
  in.rounds_planned = state.limit.rounds.value_or(0);
  in.max_failure_rate = state.max_failure_rate;
  return BurnInSummaryOf(in);
}

class BurnIn {
 public:
  BurnIn(BurnInState state, std::FILE* err) : state_(std::move(state)), err_(err) {}

  // RunHooks::after_stages: the rounds, then the judgement.
  int Rounds(StageContext& ctx) {
    Store& store = ctx.store();
    auto start = std::chrono::steady_clock::now() -
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                     std::chrono::duration<double>(Elapsed0()));
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    // One read of the rounds a resumed burn-in already has; after that
    // each round reads only its own results.
    int failures = 0;
    if (state_.rounds_done > 0) {
      auto stored = store.GetRoundPairResults(ctx.run_id());
      if (stored.ok()) failures = TallyOf(*stored).failures;
    }
    for (int round = state_.rounds_done + 1;
         BurnInMayStartRound(state_.limit, round, elapsed()) && !InterruptFlag().load(); ++round) {
      ctx.progress().Note("burn-in " +
                          BurnInProgressLine(state_.limit, round, elapsed(), failures));
      RunRound(ctx, round);
      if (InterruptFlag().load()) {
        // A round cut by Ctrl-C is not half-counted: --resume runs it again.
        store.DeleteRoundsFrom(ctx.run_id(), round);
        break;
      }
      auto results = store.GetPairResultsOfRound(ctx.run_id(), round);
      RoundTally tally = results.ok() ? TallyOf(*results) : RoundTally{true, 0};
      failures += tally.failures;
      if (!tally.tested) {
        // Every looped stage skipped (no GPU, fewer than two usable nodes):
        // looping on would "pass" thousands of empty rounds.
        skip_message_ = "round " + std::to_string(round) + " tested no pair (" +
                        SkipReasons(store, ctx.run_id()) +
                        "): nothing to burn in, the burn-in stopped";
        store.DeleteRoundsFrom(ctx.run_id(), round);
        ctx.Record(NodeCheck("burnin", "*", "rounds", Outcome::kSkip, skip_message_));
        tested_nothing_ = true;
        break;
      }
      state_.rounds_done = round;
      state_.round_end_s[round] = elapsed();
      store.SetRunMeta(ctx.run_id(), "burnin", state_.ToJson());
    }
    return Judge(ctx);
  }

  // RunHooks::after_report.
  void Report(std::FILE* out) const {
    if (tested_nothing_) {
      std::fprintf(out, "\nburn-in: skip: %s\n", skip_message_.c_str());
      return;
    }
    int pass = 0, flaky = 0, fail = 0;
    for (const PairRate& p : summary_.pairs) {
      pass += p.outcome == Outcome::kPass;
      flaky += p.outcome == Outcome::kWarn ||
               (p.outcome == Outcome::kFail && p.failures + p.hangs < p.attempts);
      fail += p.outcome == Outcome::kFail && p.failures + p.hangs == p.attempts;
    }
    std::fprintf(out,
                 "\nburn-in: %d rounds in %s; %zu pair checks: %d passed every round, %d flaky, "
                 "%d failed every round\n",
                 summary_.rounds_done, DurationText(summary_.elapsed_s).c_str(),
                 summary_.pairs.size(), pass, flaky, fail);
    for (const Verdict& v : verdicts_) {
      std::fprintf(out, "  %-5s %s\n", OutcomeName(v.severity), v.summary.c_str());
    }
  }

 private:
  double Elapsed0() const {
    return state_.round_end_s.empty() ? 0 : state_.round_end_s.rbegin()->second;
  }

  void RunRound(StageContext& ctx, int round) {
    std::vector<std::string> nodes = UsableNames(ctx.fleet());
    bool whole = BurnInRoundRunsWholeCluster(nodes.size(), round);
    Inventory inv = RoundInventory(ctx.inventory(), whole);
    StageContext rc(inv, ctx.store(), ctx.run_id(), ctx.fleet(), ctx.progress());
    rc.InheritFrom(ctx);
    rc.SetBurnInRound(BurnInRound{round, BurnInRoundPairs(nodes, round), whole});
    for (const std::string& name : state_.loop_stages) {
      if (InterruptFlag().load()) return;
      Status s = FindStageSpec(name)->make()->Run(rc);
      if (!s.ok()) rc.Record(NodeCheck(name, "*", "stage", Outcome::kError, s.ToString()));
    }
    if (!InterruptFlag().load()) SampleHealth(rc);
  }

  int Judge(StageContext& ctx) {
    Store& store = ctx.store();
    std::vector<std::string> names;
    for (const Node& n : ctx.inventory().nodes) names.push_back(n.name);
    summary_ = SummaryOf(store, ctx.run_id(), state_, names);
    verdicts_ = BurnInVerdicts(summary_);
    for (const Verdict& v : verdicts_) {
      Status s = store.AddVerdict(ctx.run_id(), v);
      if (!s.ok()) std::fprintf(err_, "clustercheck: store: %s\n", s.ToString().c_str());
    }
    if (tested_nothing_) return kExitUnjudgeable;
    return BurnInExitCode(verdicts_);
  }

  // The looped stages' own skip messages of the last round ("nccl: no
  // node has a usable GPU ..."), for the operator.
  static std::string SkipReasons(Store& store, int64_t run_id) {
    auto rs = store.GetRoundNodeResults(run_id);
    std::string out;
    if (!rs.ok()) return out;
    for (const NodeResult& r : *rs) {
      if (r.outcome != Outcome::kSkip || !IsLoopStage(r.stage)) continue;
      std::string line = r.stage + ": " + r.message;
      if (out.find(line) == std::string::npos) out += (out.empty() ? "" : "; ") + line;
    }
    return out.empty() ? "every looped stage skipped" : out;
  }

  BurnInState state_;
  std::FILE* err_;
  BurnInSummary summary_;
  std::vector<Verdict> verdicts_;
  bool tested_nothing_ = false;
  std::string skip_message_;
};

}  // namespace

std::optional<BurnInSummary> StoredBurnIn(Store& store, const RunRecord& run,
                                          const std::vector<std::string>& nodes) {
  if (!run.meta.contains("burnin") || !run.meta["burnin"].is_object()) return std::nullopt;
  BurnInSummary s = SummaryOf(store, run.id, BurnInState::FromJson(run.meta["burnin"]), nodes);
  BurnInVerdicts(s);  // judges each pair's outcome; the verdicts are stored already
  return s;
}

Result<double> ParseBurnInDuration(const std::string& text) {
  if (text.empty()) return Status::BadArgument("--for: empty duration");
  double total = 0, number = 0;
  bool digits = false, any_unit = false;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      number = number * 10 + (c - '0');
      digits = true;
      continue;
    }
    double unit = c == 'h' ? 3600 : c == 'm' ? 60 : c == 's' ? 1 : 0;
    if (unit == 0 || !digits) {
      return Status::BadArgument("--for: '" + text +
                                 "' is not a duration (e.g. 2h, 90m, 1h30m, 600s)");
    }
    total += number * unit;
    number = 0;
    digits = false;
    any_unit = true;
  }
  if (digits) total += number;  // a plain number, or seconds after the last unit
  if (!any_unit && !digits) return Status::BadArgument("--for: '" + text + "' is not a duration");
  if (total <= 0) return Status::BadArgument("--for: the duration must be more than 0");
  return total;
}

std::vector<std::string> BurnInLoopStages(const std::vector<std::string>& stages) {
  std::vector<std::string> out;
  for (const std::string& s : stages) {
    if (IsLoopStage(s)) out.push_back(s);
  }
  return out;
}

int RunBurnIn(BurnInOptions o) {
  auto inv = LoadInventory(o.run.inventory_path, o.run.environment);
  if (!inv.ok()) {
    std::fprintf(o.run.err, "clustercheck: %s\n", inv.status().message().c_str());
    return kExitUsage;
  }
  BurnInState state;
  if (o.resume) {
    auto store = Store::Open(o.run.db_path.empty() ? DefaultStorePath() : o.run.db_path);
    auto run = store.ok() ? (*store)->GetRun(o.resume) : Result<RunRecord>(store.status());
    if (!run.ok() || !run->meta.contains("burnin")) {
      std::fprintf(o.run.err, "clustercheck: --resume %lld: %s\n", static_cast<long long>(o.resume),
                   run.ok() ? "that run is not a burn-in" : run.status().ToString().c_str());
      return kExitUsage;
    }
    state = BurnInState::FromJson(run->meta["burnin"]);
    // A round stored in part (the controller died in it) runs again.
    (*store)->DeleteRoundsFrom(o.resume, state.rounds_done + 1);
    o.run.hooks.resume_run = o.resume;
  } else {
    if (!o.for_s && !o.rounds) {
      std::fprintf(o.run.err, "clustercheck: burnin needs --for DURATION or --rounds N\n");
      return kExitUsage;
    }
    state.limit = {o.rounds, o.for_s};
    state.max_failure_rate = inv->burnin.max_failure_rate;
    std::vector<std::string> wanted = inv->stages.empty() ? DefaultStageNames() : inv->stages;
    state.loop_stages = BurnInLoopStages(wanted);
  }
  if (state.loop_stages.empty()) {
    std::fprintf(o.run.err,
                 "clustercheck: burnin: the inventory enables none of the pair stages "
                 "(nics, ports, nccl, mpi) that a burn-in loops\n");
    return kExitUsage;
  }
  // Round 0: every asked stage but the looped ones, except nics, whose
  // choice of network (from every pair) the later stages and rounds use.
  std::vector<std::string> once;
  for (const std::string& s : inv->stages.empty() ? DefaultStageNames() : inv->stages) {
    if (!IsLoopStage(s) || s == "nics") once.push_back(s);
  }
  if (once.empty()) once.push_back("facts");
  o.run.stages = once;
  BurnIn burnin(state, o.run.err);
  o.run.hooks.after_stages = [&](StageContext& ctx) {
    if (!o.resume) ctx.store().SetRunMeta(ctx.run_id(), "burnin", state.ToJson());
    return burnin.Rounds(ctx);
  };
  o.run.hooks.after_report = [&](std::FILE* out) { burnin.Report(out); };
  return RunClusterCheck(o.run);
}

}  // namespace cc
