// `ports`: a reachability matrix for every port a distributed job needs,
// in both directions, between every pair of usable nodes (docs/architecture.md,
// issue 5). Three phases over every node's agent (agent/ports_command.cc,
// run/listen_probe.h):
//   1. `ports`: each node listens on its port set and answers a token;
//   2. `probe`: in batches of round-robin rounds (RoundRobinRounds: every
//      node in one pair per round), as many rounds at once as the pacer's
//      window (probe_pacer.h, at most senders_per_receiver): a receiver is
//      probed by `window` senders at a time, each with a burst of all its
//      ports. Then every fail/hang probe is retested quietly, one prober
//      per receiver, with a 2.5x deadline, 3.5 s at least (ports_retest.h, confirm.h);
//   3. `stop`: every listener closes.
// A node whose agent stops answering in phase 2 or 3 is lost (node_lost.h):
// it is left out of the later batches and ends as one `node-lost` verdict.
// One PairResult per (sender, receiver, port): a first attempt that passed
// is stored as its batch answers, in chunks, and not kept; the rest stays
// in memory for its retest and is stored at the end (issue 14: holding
// every probe's plan entry, answer, result and cell was 84 MB of the
// controller's 119 MB heap at 64 nodes, and grows per pair). Then a
// NodeResult "listen" per node, and the attribution's verdicts
// (ports_verdict.h, stored_verdict.h), which need every probe's cell only
// when some probe did not pass; a summary goes to the run's meta under
// "ports", the retest counts under "retests.ports".
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <set>

#include "common/random_hex.h"
#include "orchestrator/run/confirm.h"
#include "orchestrator/run/fanout.h"
#include "orchestrator/run/fleet.h"
#include "orchestrator/run/listen_probe.h"
#include "orchestrator/run/probe_pacer.h"
#include "orchestrator/run/schedule.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/stages/ports/node_lost.h"
#include "orchestrator/stages/ports/ports_plan.h"
#include "orchestrator/stages/ports/ports_retest.h"
#include "orchestrator/stages/ports/ports_spec.h"
#include "orchestrator/stages/ports/ports_verdict.h"
#include "orchestrator/stages/ports/probe_plan.h"
#include "orchestrator/stages/ports/stored_verdict.h"

namespace cc {
namespace {

constexpr double kListenTimeoutS = 30;
constexpr double kStopTimeoutS = 15;
// A retest waits this much longer than the first attempt (issue 17), and
// never less than kMinRetestMs: Linux sends a SYN again 1 s and 3 s after
// the first, so a retest that lasts past 3 s gives a connect three tries.
// A link that drops 10% of packets then fails a retest about once in a
// thousand, not once in a hundred (tests/cluster/flaky_link_test.sh saw a
// pair accused that way with a 2.5 s retest).
constexpr double kRetestDeadlineFactor = 2.5;
constexpr int kMinRetestMs = 3500;
// Retests stop after this long; what is left keeps its first attempt,
// unconfirmed. A whole node down costs kConfirmationsPerSymptom quiet
// rounds, far below this.
constexpr double kMaxRetestS = 120;
// A sender whose answer is late gets this much more before it counts as
// lost: a starved ssh session on a loaded controller is not a lost node.
constexpr double kLostGraceS = 10;
// Passed first attempts are stored this many at a time: one transaction
// each, and never more of them in memory.
constexpr size_t kPassChunk = 2048;

double MsSince(Clock& clock, Clock::time_point start) {
  return std::round(std::chrono::duration<double, std::milli>(clock.Now() - start).count());
}

Outcome OutcomeOfWait(const Status& s) {
  return s.Is(ErrorKind::kTimeout) ? Outcome::kHang : Outcome::kError;
}

// One node's side of the stage.
struct Peer : ListeningPeer {
  ReceiverInfo info;
  Json listening;                // the agent's "listening" data
  Json timing = Json::object();  // send_ms (max), agent_ms and probe_ms (sums)
};

// What a sender's agent said about one planned probe.
struct Answer {
  Json data;  // the agent's probe object, when `status` is ok
  Status status = Status::Internal("not probed");
};

// What a sender's agent said about a batch: the plan indices it was sent
// and, in their order, its probe objects (all of them when status is ok).
struct BatchAnswer {
  const std::vector<size_t>& idx;
  const Status& status;
  const std::vector<Json>& probes;
  Answer At(size_t k) const {
    Answer a;
    a.status = status;
    if (status.ok()) a.data = probes[k];
    return a;
  }
};
using AnswerSink = std::function<void(const BatchAnswer&)>;

// Plan indices per sender for one batch of probes.
using Targets = std::map<std::string, std::vector<size_t>>;

class PortsStage : public Stage {
 public:
  std::string name() const override { return "ports"; }

  Status Run(StageContext& ctx) override {
    auto settings = ReadPortsSettings(ctx.inventory().StageSettings("ports"));
    if (!settings.ok()) return settings.status();
    settings_ = *settings;
    clock_ = &ctx.clock();
    LeaveOutCauses(ctx);
    if (peers_.size() < 2) {
      for (Peer& p : peers_) {
        RecordNode(ctx, p.name, "listen", Outcome::kSkip,
                   "the ports stage needs at least two usable nodes", Json::object());
      }
      return Status::Ok();
    }
    tokens_ = peers_.Tokens("clustercheck-ports " + RandomHex(12));
    size_t rounds = ctx.PairRounds(peers_.Names()).size();
    ctx.progress().StartStage("ports", static_cast<long long>(peers_.size() * 2 + rounds), "steps");
    start_ = clock_->Now();
    Listen(ctx);
    const Clock::time_point t1 = clock_->Now();
    Probe(ctx);
    const Clock::time_point t2 = clock_->Now();
    KeepUnanswered();
    // A burn-in's rounds are its confirmation: one round accuses no one.
    if (!ctx.burnin_round()) Retest(ctx);
    const Clock::time_point t3 = clock_->Now();
    const double alive_ms = SinceStartMs();
    peers_.Stop(
        ctx, kStopTimeoutS, [this](const Peer& p) { return Lost(p.name); },
        [&](Peer& p) {
          if (MeansNodeLost(p.stop)) MarkLost(p.name, "stop", alive_ms, p.stop);
        });
    AskLostAgain(ctx);
    ctx.progress().FinishStage();
    auto ms = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    Record(ctx, ms(start_, t1), ms(t1, t2), ms(t2, t3));
    TakeLostOutOfFleet(ctx);
    return Status::Ok();
  }

 private:
  // The usable nodes become peers but those whose cause an earlier stage
  // established (nics: the link is down, the address wrong): probing them
  // would only measure that cause again, and wait for its timeouts. Their
  // pairs are `skip`, saying why (containment.h).
  void LeaveOutCauses(StageContext& ctx) {
    const Containment contained = ctx.containment();
    std::vector<std::string> job;
    std::map<std::string, std::string> left_out;
    for (NodeState* s : ctx.fleet().Usable()) {
      std::string why = contained.WhyNode(s->node->name);
      if (!why.empty()) {
        left_out[s->node->name] = why;
        continue;
      }
      peers_.Add(s);
      job.push_back(s->node->name);
    }
    if (left_out.empty()) return;
    std::vector<std::string> checks;
    for (int port : settings_.ports) checks.push_back("tcp/" + std::to_string(port));
    ContainedSkips skips = ContainedResults("ports", left_out, job, {"listen"}, checks);
    for (NodeResult& r : skips.nodes) ctx.Record(std::move(r));
    ctx.Record(std::move(skips.pairs));
  }

  // The node's address on the network the nics stage selected, when it
  // ran; the inventory's address otherwise.
  std::string AddressOf(StageContext& ctx, const cc::Node& node) const {
    std::optional<NetworkChoice> choice = ctx.network_choice();
    return choice ? choice->AddressOr(node.name, node.address) : node.address;
  }

  size_t PortsPerReceiver() const {
    return settings_.ports.size() + 1 + settings_.ephemeral_samples;
  }

  // How long the agents hold their listeners without a "stop": every
  // batch at its deadline (at most one per round), the retests' budget,
  // and the other phases.
  double HoldSeconds() const {
    size_t rounds = peers_.size();
    size_t burst = PortsPerReceiver() * static_cast<size_t>(settings_.senders_per_receiver);
    return kListenTimeoutS + kStopTimeoutS + 60 + kMaxRetestS +
           static_cast<double>(rounds) *
               ProbePhaseMs(burst, settings_.parallel, settings_.timeout_ms) / 1000.0;
  }

  void Listen(StageContext& ctx) {
    bool ssh = ctx.inventory().transport != "local";
    double hold_s = HoldSeconds();
    auto args = [&](Peer& p) {
      p.info.node = p.name;
      p.info.addr = AddressOf(ctx, *p.state->node);
      if (ssh) p.info.ssh_port = p.state->node->ssh.port;
      return Json{{"listen_addr", p.info.addr},
                  {"ports", ListenPorts(settings_.ports, p.info.ssh_port)},
                  {"ephemeral_samples", settings_.ephemeral_samples},
                  {"token", tokens_.at(p.name)},
                  {"hold_s", hold_s}};
    };
    auto listening = [](Peer& p, const Json& data) {
      p.listening = data;
      return ParseListening(p.listening, &p.info);
    };
    peers_.Listen(ctx, "ports", kListenTimeoutS, args, listening);
  }

  void Plan(const StageContext& ctx) {
    std::vector<std::string> senders;
    std::vector<ReceiverInfo> receivers;
    for (const Peer& p : peers_) {
      if (!p.listen.ok()) continue;
      senders.push_back(p.name);
      receivers.push_back(p.info);
    }
    plan_ = ProbePlan(senders, receivers, settings_.ports);
    first_state_.assign(plan_.size(), 0);
    first_outcome_.assign(plan_.size(), Outcome::kError);
    state_names_ = {""};
  }

  // Phase 2's burst: `window` rounds at a time, both directions of every
  // pair of those rounds, each sender with all its receivers' ports in one
  // control line.
  void Probe(StageContext& ctx) {
    Plan(ctx);
    std::vector<std::string> listening;
    for (const Peer& p : peers_) {
      if (p.listen.ok()) listening.push_back(p.name);
    }
    // A burn-in round probes its own pairs, both directions, and no others.
    rounds_ = ctx.PairRounds(listening);
    const std::vector<Round>& rounds = rounds_;
    ProbePacer pacer({.max_window = settings_.senders_per_receiver});
    batches_ = Json::array();
    for (size_t next = 0; next < rounds.size();) {
      size_t w = std::min(rounds.size() - next, static_cast<size_t>(pacer.window()));
      Targets targets = BatchProbes(plan_, rounds, next, w, LostNames());
      std::string phase = "probe batch " + std::to_string(batches_.size() + 1) + ", rounds " +
                          std::to_string(next + 1) + "-" + std::to_string(next + w) + " of " +
                          std::to_string(rounds.size());
      const Clock::time_point t0 = clock_->Now();
      RunBatch(ctx, targets, settings_.timeout_ms, phase,
               [&](const BatchAnswer& a) { OnFirstAnswers(ctx, a); });
      std::vector<double> connect_ms;
      {
        std::lock_guard<std::mutex> lock(mu_);
        connect_ms.swap(batch_connect_ms_);
      }
      batches_.push_back({{"rounds", w},
                          {"senders_per_receiver", w},
                          {"p90_connect_ms", Percentile(connect_ms, 0.9)},
                          {"ms", MsSince(*clock_, t0)}});
      pacer.OnBatch(std::move(connect_ms));
      next += w;
      ctx.progress().Advance(static_cast<long long>(w));
    }
    FlushPasses(ctx, 0);
  }

  // A connect time of a probe that got an answer: the pacer's congestion
  // signal. Negative when the probe has none.
  static double ConnectMs(const Answer& a) {
    if (!a.status.ok() || !a.data.contains("ms") || !a.data["ms"].is_number()) return -1;
    std::string st = a.data.value("state", "");
    if (st == "open" || st == "open-other" || st == "refused" || st == "unreachable") {
      return a.data["ms"].get<double>();
    }
    return -1;
  }

  uint8_t InternState(const std::string& state) {  // under mu_
    for (size_t k = 0; k < state_names_.size(); ++k) {
      if (state_names_[k] == state) return static_cast<uint8_t>(k);
    }
    if (state_names_.size() == 255) return 0;  // cannot happen: JudgeProbe has 7 states
    state_names_.push_back(state);
    return static_cast<uint8_t>(state_names_.size() - 1);
  }

  // A sender's first attempts of a batch: judged at once; a pass goes to
  // the store (FlushPasses) and is not kept, anything else is kept for its
  // retest and the end of the stage.
  void OnFirstAnswers(StageContext& ctx, const BatchAnswer& b) {
    std::vector<PairResult> results;
    std::vector<double> connect;
    results.reserve(b.idx.size());
    for (size_t k = 0; k < b.idx.size(); ++k) {
      Answer a = b.At(k);
      double c = ConnectMs(a);
      if (c >= 0) connect.push_back(c);
      results.push_back(Judge(b.idx[k], a));
    }
    size_t stored_at = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      batch_connect_ms_.insert(batch_connect_ms_.end(), connect.begin(), connect.end());
      for (size_t k = 0; k < b.idx.size(); ++k) {
        const size_t i = b.idx[k];
        PairResult& r = results[k];
        first_state_[i] = InternState(r.state);
        first_outcome_[i] = r.outcome;
        if (r.outcome == Outcome::kPass) {
          ++passed_by_state_[r.state];
          ++passes_stored_;
          passes_.push_back(std::move(r));
        } else {
          kept_[i] = std::move(r);
        }
      }
      stored_at = passes_.size();
    }
    if (stored_at >= kPassChunk) FlushPasses(ctx, kPassChunk);
  }

  // Stores the passes held once there are at least `at_least` of them
  // (0: all of them, waiting for a flush under way). One thread stores at
  // a time and takes what the others add meanwhile: when each swapped out
  // its own chunk and waited for the store, 64 senders' threads held up to
  // 64 chunks at once (5.8 MB of a 27 MB heap peak at 128 nodes).
  void FlushPasses(StageContext& ctx, size_t at_least) {
    std::unique_lock<std::mutex> storing(flush_mu_, std::defer_lock);
    if (at_least == 0) {
      storing.lock();
    } else if (!storing.try_lock()) {
      return;  // the thread storing takes these too
    }
    for (;;) {
      std::vector<PairResult> out;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (passes_.empty() || passes_.size() < std::max<size_t>(at_least, 1)) return;
        out.swap(passes_);
      }
      ctx.Record(std::move(out));
    }
  }

  // Every planned probe of the stage's pairs that no agent answered (a
  // node lost before its batch) is kept as its first attempt says: "not
  // probed", an error that HideLost turns into a skip.
  void KeepUnanswered() {
    std::lock_guard<std::mutex> lock(mu_);
    probes_ = 0;
    for (const Round& round : rounds_) {
      for (const auto& [a, b] : round) {
        for (const auto& [src, dst] : {std::pair{a, b}, std::pair{b, a}}) {
          auto [lo, hi] = plan_.Range(src, dst);
          probes_ += hi - lo;
          for (size_t i = lo; i < hi; ++i) {
            if (first_state_[i] != 0) continue;
            PairResult r = Judge(i, Answer{});
            first_state_[i] = InternState(r.state);
            first_outcome_[i] = r.outcome;
            kept_[i] = std::move(r);
          }
        }
      }
    }
  }

  // Sends every sender of `targets` its probes as one control line and
  // waits for the answers, all senders at once. A sender whose agent stops
  // answering is lost (node_lost.h).
  void RunBatch(StageContext& ctx, const Targets& targets, int timeout_ms, const std::string& phase,
                const AnswerSink& sink) {
    std::vector<std::string> names;
    for (const auto& [src, idx] : targets) {
      if (!idx.empty() && !Lost(src)) names.push_back(src);
    }
    if (names.empty()) return;
    const Json tokens(tokens_);
    const double alive_ms = SinceStartMs();
    peers_.ForEach(ctx, names, [&](Peer& p) {
      Status st = ProbeOne(p, targets.at(p.name), tokens, timeout_ms, sink);
      if (MeansNodeLost(st)) MarkLost(p.name, phase, alive_ms, st);
    });
  }

  Status ProbeOne(Peer& p, const std::vector<size_t>& idx, const Json& tokens, int timeout_ms,
                  const AnswerSink& sink) {
    Json targets = Json::array();
    for (size_t i : idx) {
      const PlannedProbe pp = plan_.At(i);
      targets.push_back(
          {{"node", pp.dst}, {"addr", pp.addr}, {"port", pp.port}, {"plain", pp.plain}});
    }
    const Clock::time_point start = clock_->Now();
    Deadline deadline =
        Deadline::In(*clock_, Millis(ProbePhaseMs(idx.size(), settings_.parallel, timeout_ms)));
    ProbeReply reply = AskToProbe(p,
                                  {{"targets", targets},
                                   {"tokens", tokens},
                                   {"timeout_ms", timeout_ms},
                                   {"parallel", settings_.parallel}},
                                  deadline, kLostGraceS);
    Status st = reply.status;
    const std::vector<Json>& got = reply.probes;
    const Json& last = reply.last;
    p.timing["send_ms"] = std::max(p.timing.value("send_ms", 0.0), reply.send_ms);
    if (last.is_object() && last.contains("elapsed_ms") && last["elapsed_ms"].is_number()) {
      p.timing["agent_ms"] = p.timing.value("agent_ms", 0.0) + last["elapsed_ms"].get<double>();
    }
    p.timing["probe_ms"] = p.timing.value("probe_ms", 0.0) + MsSince(*clock_, start);
    if (st.ok() && got.size() != idx.size()) {
      st = Status::Protocol("agent answered " + std::to_string(got.size()) + " probes for " +
                            std::to_string(idx.size()) + " targets");
    }
    sink(BatchAnswer{idx, st, got});
    return st;
  }

  bool Lost(const std::string& node) const {
    std::lock_guard<std::mutex> lock(mu_);
    return lost_.count(node) > 0;
  }

  double SinceStartMs() const {
    return std::chrono::duration<double, std::milli>(clock_->Now() - start_).count();
  }

  void MarkLost(const std::string& node, const std::string& phase, double alive_ms,
                const Status& why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (lost_.count(node)) return;
    lost_[node] = LostNode{node, phase, alive_ms, SinceStartMs(), why.ToString()};
  }

  // The confirmation (node_lost.h): each lost node asked again over a
  // fresh connection, all at once within the fleet's window; the stage's
  // listeners are closed by then, so a node that answers has nothing more
  // measured, but it is not accused and stays in the run with its new agent.
  void AskLostAgain(StageContext& ctx) {
    std::vector<LostNode*> lost;
    for (auto& [name, l] : lost_) lost.push_back(&l);
    if (lost.empty()) return;
    if (!ctx.fleet().transport().Reconnects()) {
      for (LostNode* l : lost) {
        l->again = "the " + ctx.fleet().transport().name() + " launcher cannot connect again";
      }
      return;
    }
    SlidingWindow(lost.size(), static_cast<size_t>(ctx.fleet().fanout()), [&](size_t i) {
      LostNode& l = *lost[i];
      NodeState* s = ctx.fleet().Find(l.node);
      if (s == nullptr) return;
      l.asked_again = true;
      Status again = ctx.fleet().Reconnect(*s);
      l.answered_again = again.ok();
      if (!again.ok()) l.again = again.ToString();
    });
  }

  // A lost node is not tried again by later stages (Fleet::MarkUnusable):
  // its node-lost verdict already says what happened, and waiting on it
  // again would cost every later stage its deadline.
  void TakeLostOutOfFleet(StageContext& ctx) const {
    for (const auto& [name, l] : lost_) {
      if (l.answered_again) continue;  // it is there: only contact was lost
      ctx.fleet().MarkUnusable(
          name, Status::Unreachable("lost during the ports stage (" + l.phase + "): " + l.reason),
          "lost in ports");
    }
  }

  std::set<std::string> LostNames() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::set<std::string> out;
    for (const auto& [name, l] : lost_) out.insert(name);
    return out;
  }

  PairResult Judge(size_t i, const Answer& a) const;
  void Retest(StageContext& ctx);
  void TakeEarlierConfirmations(StageContext& ctx, std::vector<size_t>& failed,
                                SymptomBudget& budget);

  static void RecordNode(StageContext& ctx, const std::string& node, const std::string& check,
                         Outcome o, const std::string& message, Json evidence) {
    ctx.Record(NodeCheck("ports", node, check, o, message, std::move(evidence)));
  }

  void Record(StageContext& ctx, double listen_ms, double probe_ms, double retest_ms);
  void RecordListen(StageContext& ctx, const Peer& p);
  void HideLost();
  std::vector<PortCell> Cells(const std::function<bool(size_t)>& want) const;
  std::vector<PairResult> NeverListened() const;
  void RecordVerdicts(StageContext& ctx);

  PortsSettings settings_;
  ListeningPeers<Peer> peers_;
  std::map<std::string, std::string> tokens_;
  ProbePlan plan_;
  std::vector<Round> rounds_;  // the stage's pairs (PairRounds)
  size_t probes_ = 0;          // planned probes of those pairs (KeepUnanswered)
  // By plan index, what attribution needs of each first attempt; 0 in
  // first_state_: not answered. A state is an index into state_names_.
  std::vector<uint8_t> first_state_;
  std::vector<Outcome> first_outcome_;
  std::vector<std::string> state_names_;
  // First attempts that did not pass, by plan index: retested, merged,
  // stored at the end (all under mu_ while batches run).
  std::map<size_t, PairResult> kept_;
  std::vector<PairResult> passes_;  // passed, not yet stored (FlushPasses)
  size_t passes_stored_ = 0;
  std::map<std::string, long long> passed_by_state_;
  std::vector<double> batch_connect_ms_;
  Json batches_ = Json::array();
  RetestCounts retests_;
  int retests_skipped_ = 0;
  int token_timeouts_cleared_ = 0;  // token timeouts whose retest passed
  Clock* clock_ = &RealClock();     // the run's (StageContext::clock()), set by Run
  Clock::time_point start_;
  mutable std::mutex mu_;
  std::mutex flush_mu_;  // held by the one thread storing passes (FlushPasses)
  std::map<std::string, LostNode> lost_;
};

PairResult PortsStage::Judge(size_t i, const Answer& a) const {
  const PlannedProbe pp = plan_.At(i);
  PairResult r;
  r.stage = "ports";
  r.src = pp.src;
  r.dst = pp.dst;
  r.check = "tcp/" + std::to_string(pp.port);
  r.evidence = {{"kind", PortKindName(pp.kind)}, {"addr", pp.addr}};
  if (!pp.bind_error.empty()) r.evidence["bind_error"] = pp.bind_error;
  if (!a.status.ok()) {
    r.outcome = OutcomeOfWait(a.status);
    r.state = "error";
    r.message = pp.src + "'s agent did not report its probes: " + a.status.ToString();
    return r;
  }
  const Json& d = a.data;
  ProbeJudgement j =
      JudgeProbe(pp, d.value("state", ""), d.value("reply", ""), d.value("note", ""), tokens_);
  r.outcome = j.outcome;
  r.state = j.state;
  r.message = j.message;
  for (const char* key : {"ms", "errno", "reply", "note"}) {
    if (d.contains(key)) r.evidence[key] = d[key];
  }
  return r;
}

// A probe that timed out, with every other probe of its pair, on a path an
// earlier stage already confirmed failing that way (the nics stage's quiet retest of the same
// sender and address: confirmed_paths.h) is confirmed by it, counted for its symptom, and not
// retested: the retest would wait the same deadline for the same answer.
void PortsStage::TakeEarlierConfirmations(StageContext& ctx, std::vector<size_t>& failed,
                                          SymptomBudget& budget) {
  std::map<std::string, std::string> address;
  for (const Peer& p : peers_) address[p.name] = p.info.addr;
  // Only a pair whose every probe failed alike is a path's fault: a lossy
  // link fails some ports of a pair and passes others, and is retested.
  std::map<std::pair<std::string, std::string>, std::set<int>> states;  // 0 = passed
  for (size_t i = 0; i < plan_.size(); ++i) {
    if (first_state_[i] == 0) continue;
    int state = IsPassOrWarn(first_outcome_[i]) ? 0 : first_state_[i];
    states[{plan_.SrcOf(i), plan_.DstOf(i)}].insert(state);
  }
  std::vector<size_t> left;
  for (size_t i : failed) {
    PairResult& r = kept_.at(i);
    const std::set<int>& alike = states[{r.src, r.dst}];
    const bool path = alike.size() == 1 && *alike.begin() != 0;
    const std::string why = path && NeedsConfirmation(r.outcome)
                                ? ctx.confirmed_paths().Why(r.src, address[r.dst], r.state)
                                : "";
    if (why.empty()) {
      left.push_back(i);
      continue;
    }
    r.evidence["confirmation"] = kConfirmed;
    r.evidence["confirmed_by"] = why;
    budget.Confirmed(plan_.At(i));
  }
  failed = std::move(left);
}

// Confirmation: every fail/hang and token timeout of the burst again, one prober per
// receiver (QuietRounds), with a longer deadline; a symptom confirmed by
// kConfirmationsPerSymptom peers is not retested further (ports_retest.h).
void PortsStage::Retest(StageContext& ctx) {
  std::vector<size_t> failed;
  for (const auto& [i, r] : kept_) {
    if (!NeedsConfirmation(r.outcome) && !IsTokenTimeout(r)) continue;
    if (!Lost(plan_.SrcOf(i)) && !Lost(plan_.DstOf(i))) failed.push_back(i);
  }
  if (failed.empty()) {
    ctx.RecordRetests("ports", retests_);
    return;
  }
  int timeout_ms = std::max(
      kMinRetestMs, static_cast<int>(std::ceil(settings_.timeout_ms * kRetestDeadlineFactor)));
  SymptomBudget budget;
  for (size_t i = 0; i < plan_.size(); ++i) {
    if (first_state_[i] != 0 && IsPassOrWarn(first_outcome_[i])) {
      budget.FirstAttempt(plan_.At(i), first_outcome_[i]);
    }
  }
  TakeEarlierConfirmations(ctx, failed, budget);
  Deadline budget_time = Deadline::InSeconds(ctx.clock(), kMaxRetestS);
  std::map<size_t, Answer> second;
  std::mutex second_mu;
  auto pair_of = [this](size_t i) { return std::make_pair(plan_.SrcOf(i), plan_.DstOf(i)); };
  auto rounds = RetestRounds(pair_of, failed);
  // Probes left out of a round only because enough retests of their
  // symptom were on their way in it: they go in a later round unless those
  // came back confirmed (a flaky link's retests pass, and then every probe
  // is retested).
  std::vector<size_t> deferred;
  for (size_t r = 0; r < rounds.size(); ++r) {
    Targets targets;
    for (const RetestPair& p : rounds[r]) {
      if (Lost(p.src) || Lost(p.dst)) continue;
      for (size_t i : p.probes) {
        if (budget.ConfirmedEnough(plan_.At(i)) || budget_time.Passed()) continue;
        if (budget.Covered(plan_.At(i))) {
          deferred.push_back(i);
          continue;
        }
        targets[p.src].push_back(i);
        budget.Planned(plan_.At(i));
      }
    }
    budget.EndRound();
    if (r + 1 == rounds.size() && !deferred.empty()) {
      for (auto& more : RetestRounds(pair_of, deferred)) rounds.push_back(std::move(more));
      deferred.clear();
    }
    RunBatch(ctx, targets, timeout_ms,
             "retest round " + std::to_string(r + 1) + " of " + std::to_string(rounds.size()),
             [&](const BatchAnswer& b) {
               std::lock_guard<std::mutex> lock(second_mu);
               for (size_t k = 0; k < b.idx.size(); ++k) second[b.idx[k]] = b.At(k);
             });
    for (const auto& [src, idx] : targets) {
      for (size_t i : idx) {
        auto got = second.find(i);
        PairResult merged =
            ConfirmPortProbe(kept_.at(i), Judge(i, got == second.end() ? Answer{} : got->second));
        if (got != second.end()) second.erase(got);
        const std::string how = merged.evidence.value("confirmation", "");
        if (how == kConfirmed && NeedsConfirmation(merged.outcome)) budget.Confirmed(plan_.At(i));
        if (how == kCleared) {
          // Neither confirmed, flaky nor unconfirmed: load (ports_retest.h).
          ++retests_.retested;
          ++token_timeouts_cleared_;
        } else {
          retests_.Add(merged);
        }
        kept_[i] = std::move(merged);
      }
    }
  }
  // What was not retested keeps its first attempt, and says why.
  for (size_t i : failed) {
    PairResult& r = kept_.at(i);
    if (r.evidence.contains("confirmation")) continue;
    r.evidence["confirmation"] = kUnconfirmed;
    r.evidence["not_retested"] =
        budget.ConfirmedEnough(plan_.At(i))
            ? "its symptom (" + r.dst + "'s " + r.check + ", or " + r.src +
                  "'s) was confirmed by " + std::to_string(kConfirmationsPerSymptom) +
                  " retests from other peers"
            : "a node of the pair was lost, or the retest time budget was spent";
    ++retests_skipped_;
  }
  ctx.RecordRetests("ports", retests_);
}

void PortsStage::RecordListen(StageContext& ctx, const Peer& p) {
  Json ev = p.listening.is_object() ? p.listening : Json::object();
  ev["address"] = p.info.addr;
  ev["timing"] = p.timing;
  if (!p.listen.ok()) {
    RecordNode(ctx, p.name, "listen", OutcomeOfWait(p.listen),
               "could not listen: " + p.listen.ToString(), ev);
    return;
  }
  std::string eph = p.info.ephemeral.empty()
                        ? ""
                        : " and " + std::to_string(p.info.ephemeral.size()) + " ephemeral ports";
  std::string msg = "listened on " + FormatTcpPorts({p.info.bound.begin(), p.info.bound.end()}) +
                    eph + " at " + ev.value("address", p.info.addr);
  Outcome o = Outcome::kPass;
  for (const auto& [port, err] : p.info.bind_errors) {
    msg += "; tcp/" + std::to_string(port) + ": " + err;
    o = Outcome::kWarn;
  }
  std::string note = p.listening.value("note", std::string());
  if (!note.empty()) msg += "; " + note;
  if (Lost(p.name)) {
    // The node-lost verdict says it all; this row is what it did before.
    const LostNode& l = lost_.at(p.name);
    msg += (l.answered_again ? "; then the controller lost contact with it ("
                             : "; then the node was lost (") +
           l.phase + ")";
  } else if (!p.stop.ok()) {
    msg += "; " + StopNotConfirmed(p);
    o = Worse(o, Outcome::kError);
  }
  RecordNode(ctx, p.name, "listen", o, msg, ev);
}

// Results that a lost node leaves without a verdict become skips (their
// node-lost verdict explains them). Passes are never hidden
// (HiddenByLoss), so the kept results are all it can touch.
void PortsStage::HideLost() {
  std::set<std::string> lost = LostNames();
  if (lost.empty()) return;
  for (auto& [i, r] : kept_) {
    if (!HiddenByLoss(r.src, r.dst, r.outcome, r.state, lost)) continue;
    const std::string& who = lost.count(r.dst) ? r.dst : r.src;
    r.evidence["first"] = {
        {"outcome", OutcomeName(r.outcome)}, {"state", r.state}, {"message", r.message}};
    r.outcome = Outcome::kSkip;
    r.state = kNodeLostState;
    const LostNode& l = lost_.at(who);
    r.message = l.answered_again ? "not judged: the controller lost contact with " + who +
                                       " during " + l.phase + " (it answered again later)"
                                 : "not judged: " + who + " was lost during " + l.phase;
  }
}

// The attribution's cells of the probes `want` picks, in plan order: the
// final result of a kept probe, the first attempt of one that passed.
std::vector<PortCell> PortsStage::Cells(const std::function<bool(size_t)>& want) const {
  std::vector<PortCell> cells;
  for (size_t i = 0; i < plan_.size(); ++i) {
    if (!want(i)) continue;
    auto k = kept_.find(i);
    if (k == kept_.end() && first_state_[i] == 0) continue;  // not this stage's pair
    const PlannedProbe pp = plan_.At(i);
    if (k != kept_.end()) {
      cells.push_back({pp.src, pp.dst, pp.port, pp.kind, k->second.state, k->second.outcome});
    } else {
      cells.push_back(
          {pp.src, pp.dst, pp.port, pp.kind, state_names_[first_state_[i]], first_outcome_[i]});
    }
  }
  return cells;
}

// Pairs with a node whose agent never listened (so it neither received
// nor sent): one error per listed port, with the reason.
std::vector<PairResult> PortsStage::NeverListened() const {
  std::vector<PairResult> out;
  for (const Peer& sender : peers_) {
    for (const Peer& receiver : peers_) {
      if (&sender == &receiver || (sender.listen.ok() && receiver.listen.ok())) continue;
      const Peer& lost = receiver.listen.ok() ? sender : receiver;
      for (int port : settings_.ports) {
        PairResult r;
        r.stage = "ports";
        r.src = sender.name;
        r.dst = receiver.name;
        r.check = "tcp/" + std::to_string(port);
        r.state = "error";
        r.outcome = OutcomeOfWait(lost.listen);
        r.message = lost.name + "'s agent did not listen: " + lost.listen.ToString();
        out.push_back(std::move(r));
      }
    }
  }
  return out;
}

void PortsStage::RecordVerdicts(StageContext& ctx) {
  std::vector<std::string> nodes;
  std::map<std::string, std::pair<int, int>> ranges;
  for (const Peer& p : peers_) {
    nodes.push_back(p.name);
    if (p.info.ephemeral_range) ranges[p.name] = *p.info.ephemeral_range;
  }
  std::vector<PortVerdict> verdicts;
  for (const auto& [name, lost] : lost_) {
    std::vector<PortCell> before =
        Cells([&](size_t i) { return plan_.SrcOf(i) == name || plan_.DstOf(i) == name; });
    std::erase_if(before, [](const PortCell& c) { return c.state == kNodeLostState; });
    verdicts.push_back(NodeLostVerdict(lost, before));
  }
  // Every attribution rule starts from a probe that did not pass: when all
  // passed, there is nothing to attribute and no cell to build.
  bool all_passed = std::all_of(kept_.begin(), kept_.end(),
                                [](const auto& k) { return k.second.outcome == Outcome::kPass; });
  if (!all_passed) {
    for (PortVerdict& v : AttributePorts(nodes, Cells([](size_t) { return true; }), ranges)) {
      verdicts.push_back(std::move(v));
    }
  }
  for (const PortVerdict& v : verdicts) {
    Verdict stored = StoredVerdict(v);
    if (stored.cause != CauseScope::kNone) {
      ctx.RecordCause(std::move(stored));
    } else {
      ctx.Record(stored);
    }
  }
}

void PortsStage::Record(StageContext& ctx, double listen_ms, double probe_ms, double retest_ms) {
  for (const Peer& p : peers_) RecordListen(ctx, p);
  HideLost();
  RecordVerdicts(ctx);  // reads kept_: before it is moved out
  std::vector<PairResult> pairs;
  for (auto& [i, r] : kept_) pairs.push_back(std::move(r));
  kept_.clear();
  for (PairResult& r : NeverListened()) pairs.push_back(std::move(r));
  Json by_state = Json::object();
  for (const auto& [state, count] : passed_by_state_) by_state[state] = count;
  double agent_max = 0, send_max = 0;
  for (const Peer& p : peers_) {
    for (auto [key, max] : {std::pair{"agent_ms", &agent_max}, std::pair{"send_ms", &send_max}}) {
      if (p.timing.contains(key) && p.timing[key].is_number()) {
        *max = std::max(*max, p.timing[key].get<double>());
      }
    }
  }
  for (const PairResult& r : pairs) by_state[r.state] = by_state.value(r.state, 0) + 1;
  size_t n = passes_stored_ + pairs.size();
  ctx.Record(std::move(pairs));
  Json lost = Json::array();
  for (const auto& [name, l] : lost_) {
    lost.push_back({{"node", name}, {"phase", l.phase}, {"answered_again", l.answered_again}});
  }
  Json summary = {{"nodes", peers_.size()},
                  {"ports", settings_.ports},
                  {"ephemeral_samples", settings_.ephemeral_samples},
                  {"timeout_ms", settings_.timeout_ms},
                  {"parallel", settings_.parallel},
                  {"senders_per_receiver", settings_.senders_per_receiver},
                  {"probes", probes_},
                  {"results", n},
                  {"by_state", by_state},
                  {"batches", batches_},
                  {"retests", retests_.ToJson()},
                  {"retests_skipped", retests_skipped_},
                  {"token_timeouts_cleared", token_timeouts_cleared_},
                  {"lost", lost},
                  {"listen_ms", listen_ms},
                  {"probe_ms", probe_ms},
                  {"retest_ms", retest_ms},
                  {"agent_probe_ms_max", agent_max},
                  {"send_ms_max", send_max}};
  Status s = ctx.store().SetRunMeta(ctx.run_id(), "ports", summary);
  if (!s.ok()) ctx.progress().Note("ports: summary not stored: " + s.ToString());
  char line[200];
  std::snprintf(line, sizeof line,
                "ports: %zu probes between %zu nodes in %.2f s (%.0f/s, %zu batches), %d retests "
                "in %.2f s",
                probes_, peers_.size(), probe_ms / 1000,
                probe_ms > 0 ? probes_ / (probe_ms / 1000) : 0.0, batches_.size(),
                retests_.retested, retest_ms / 1000);
  ctx.progress().Note(line + std::string(": ") + by_state.dump());
}

}  // namespace

std::unique_ptr<Stage> MakePortsStage() { return std::make_unique<PortsStage>(); }

}  // namespace cc
