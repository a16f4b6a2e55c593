// `nics`: which network NCCL and MPI should use, with evidence (issue 6;
// docs/architecture.md). From every usable node's facts (network and rdma
// sections; asked for here when the facts stage did not run), in three
// phases over the agents (agent/nics_command.cc; run/listen_probe.h):
//   1. `nics`: each node listens on every routable address it has (a TCP
//      token listener and a UDP echo, free ports);
//   2. `probe`: every node probes every peer's address on each subnet they
//      share: TCP with token check, then DF datagrams of the subnet's MTU;
//   3. probes whose result fails are probed again, one pair per node at a
//      time with a longer deadline (nics_confirm.h); their counts go into
//      the run meta ("retests.nics");
//   4. `stop`.
// In a burn-in round (orchestrator/burnin/) only the round's pairs are
// probed, nothing is retested, and only the pair results are stored: the
// choice of network stays the one round 0 made.
// Then the pure judgement (nic_select.h), results (nics_results.h), the
// selection in the run's meta ("nics") and, for later stages, the network
// choice (ctx.SetNetworkChoice: NCCL env, MPI MCA, node -> address).
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>

#include "common/human_number.h"
#include "orchestrator/run/listen_probe.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/stages/nics/nic_local.h"
#include "orchestrator/stages/nics/nic_recommend.h"
#include "orchestrator/stages/nics/nic_select.h"
#include "orchestrator/stages/nics/nics_confirm.h"
#include "orchestrator/stages/nics/nics_results.h"
#include "orchestrator/stages/nics/nics_spec.h"

namespace cc {
namespace {

constexpr double kListenTimeoutS = 30;
constexpr double kStopTimeoutS = 15;
constexpr double kFactsTimeoutS = 60;
// 2.5 s, not 1 s: Linux retransmits a lost SYN (and re-asks a lost ARP
// request) after 1 s, so a 1 s deadline turned one lost packet into a
// "filtered" first attempt (seen once in 16,256 healthy probes at 128 nodes).
constexpr int kDefaultTimeoutMs = 2500;
// Probes in flight per sender, and so (see Plan) senders per receiver. Like
// the ports stage's default, below sshd's MaxStartups of 10.
constexpr int kDefaultSendersPerReceiver = 8;
constexpr int kDfTries = 3;
// Tried first on every address of every node (a free one when taken).
constexpr int kDefaultPort = 29400;
// A retest waits this many times the first attempt's timeout.
constexpr int kRetestSlowdown = 3;
// Retest rounds start only within this time; later ones stay unconfirmed.
constexpr double kRetestBudgetS = 120;
// A sender's targets go to its agent this many at a time, and each answer
// becomes a NicProbe at once (issue 14): at 64 nodes the whole list's JSON
// answers, held until every sender had answered, were 15 MB of the
// controller's heap, and they grow per pair.
constexpr size_t kTargetsPerCall = 64;
// Pair results are stored this many probes at a time.
constexpr size_t kProbesPerRecord = 512;

// One planned probe: a member of a subnet (subnets_[subnet].members[member])
// that a sender probes. Its JSON target is made when it is sent.
struct Target {
  uint32_t subnet = 0;
  uint32_t member = 0;
};

struct Peer : ListeningPeer {
  NodeNics nics;
  std::string facts_error;               // why there are no facts ("" when there are)
  std::map<std::string, Json> endpoint;  // addr -> {tcp_port, udp_port, error}
  std::vector<Target> targets;
  Status probe;
  // Its targets' first attempts are probes_[first_at + target]: the
  // agent's answer or why none came.
  size_t first_at = 0;
  bool probed = false;  // the fan-out reached it
};

class NicsStage : public Stage {
 public:
  std::string name() const override { return "nics"; }

  Status Run(StageContext& ctx) override {
    const Json settings = ctx.inventory().StageSettings("nics");
    timeout_ms_ = settings.value("timeout_ms", kDefaultTimeoutMs);
    senders_per_receiver_ =
        std::max(1, settings.value("senders_per_receiver", kDefaultSendersPerReceiver));
    mtu_probe_ = settings.value("mtu_probe", true);
    port_ = settings.value("port", kDefaultPort);
    std::vector<NodeState*> usable = ctx.fleet().Usable();
    std::string skip;
    if (ctx.inventory().transport == "local") {
      RecordLocal(ctx, usable);
      return Status::Ok();
    } else if (usable.size() < 2) {
      skip = "the nics stage needs at least two usable nodes";
    }
    if (!skip.empty()) {
      for (NodeState* s : usable) Record(ctx, s->node->name, "selected", Outcome::kSkip, skip);
      return Status::Ok();
    }
    for (NodeState* s : usable) peers_.Add(s);
    ctx.progress().StartStage("nics", static_cast<long long>(peers_.size()) * 3, "steps");
    // Not a time but a nonce (run ids repeat across stores, and another
    // run's listener must not answer for this one's), so the machine's
    // clock, whatever the run's is: a FakeClock would repeat it too.
    const std::string run_token =
        std::to_string(ctx.run_id()) + "-" +
        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000007);
    tokens_ = peers_.Tokens("clustercheck-nics " + run_token);
    for (const auto& [name, token] : tokens_) node_of_token_[token] = name;
    Listen(ctx);
    Plan(ctx);
    Probe(ctx);
    std::vector<NicProbe> first = std::move(probes_);
    // A burn-in's rounds are its confirmation: one round accuses no one.
    std::map<size_t, NicProbe> retests;
    if (!ctx.burnin_round()) retests = Retest(ctx, first);
    peers_.Stop(ctx, kStopTimeoutS);
    ctx.progress().FinishStage();
    Judge(ctx, first, retests);
    return Status::Ok();
  }

 private:
  static void Record(StageContext& ctx, const std::string& node, const std::string& check,
                     Outcome o, const std::string& message) {
    ctx.Record(NodeCheck("nics", node, check, o, message));
  }

  // Local transport: every node is this host and there is no network
  // between them, so the first node lists this host's interfaces and what
  // it would pick (nic_local.h); the others say why they have nothing more.
  void RecordLocal(StageContext& ctx, const std::vector<NodeState*>& usable) {
    if (usable.empty()) return;
    peers_.Add(usable[0]);
    Peer& p = peers_.all().back();
    LoadFacts(ctx, p, ctx.facts());
    LocalNics local = DescribeLocalNics(p.nics);
    if (!p.facts_error.empty()) {
      Record(ctx, p.name, "interfaces", Outcome::kError, p.facts_error);
    } else {
      std::string list;
      for (const auto& line : local.interfaces) list += (list.empty() ? "" : "; ") + line;
      Record(ctx, p.name, "interfaces", Outcome::kPass,
             list.empty() ? "no interfaces but loopback" : list);
    }
    Record(ctx, p.name, "selected", Outcome::kSkip,
           "one machine, no network between nodes to probe: " + local.summary);
    for (size_t i = 1; i < usable.size(); ++i) {
      Record(ctx, usable[i]->node->name, "selected", Outcome::kSkip,
             "local transport: the same host as " + p.name);
    }
  }

  // Facts from the facts stage, or asked for now (network and rdma only).
  void LoadFacts(StageContext& ctx, Peer& p, const std::map<std::string, Json>& facts) {
    auto it = facts.find(p.name);
    Json f = it == facts.end() ? Json() : it->second;
    if (!f.is_object() || !f.contains("network")) {
      auto call = p.state->agent->Call("facts", {{"sections", {"network", "rdma"}}},
                                       Deadline::InSeconds(ctx.clock(), kFactsTimeoutS));
      if (call.ok()) f = call->Find("facts");
      if (!call.ok()) p.facts_error = "no network facts: " + call.status().ToString();
    }
    p.nics = NodeNicsFromFacts(p.name, f);
  }

  void Listen(StageContext& ctx) {
    const std::map<std::string, Json> facts = ctx.facts();
    double hold_s = kListenTimeoutS + kStopTimeoutS + 120 + kRetestBudgetS + 60 +
                    static_cast<double>(peers_.size()) * 8 * timeout_ms_ * (1 + kDfTries) / 1000.0;
    auto args = [&](Peer& p) {
      LoadFacts(ctx, p, facts);
      Json addrs = Json::array();
      for (const NicInfo& n : p.nics.nics) {
        for (const std::string& a : n.addresses) {
          if (SubnetOf(a)) addrs.push_back({{"nic", n.name}, {"addr", AddressPart(a)}});
        }
      }
      return Json{
          {"addresses", addrs}, {"token", tokens_.at(p.name)}, {"hold_s", hold_s}, {"port", port_}};
    };
    auto listening = [](Peer& p, const Json& data) {
      for (const Json& l : data.value("listeners", Json::array())) {
        if (l.is_object()) p.endpoint[l.value("addr", "")] = l;
      }
      return Status::Ok();
    };
    peers_.Listen(ctx, "nics", kListenTimeoutS, args, listening);
  }

  void Plan(const StageContext& ctx) {
    nodes_.clear();
    for (const Peer& p : peers_) nodes_.push_back(p.nics);
    // Wrong-prefix addresses are probed on the network they belong to.
    subnets_ = GroupIntoNetworks(nodes_).subnets;
    subnet_mtu_.clear();
    for (const Subnet& s : subnets_) {
      std::vector<long long> mtus;
      for (const SubnetMember& m : s.members) {
        if (m.nic->mtu) mtus.push_back(*m.nic->mtu);
      }
      subnet_mtu_.push_back(MostCommonValue(mtus));
      const size_t m = s.members.size();
      for (size_t i = 0; i < m; ++i) {
        const SubnetMember& src = s.members[i];
        Peer& from = *peers_.Find(src.node);
        if (!from.listen.ok()) continue;
        // Peers in an order rotated by the sender's place (i+1, i+2, ...):
        // with every sender's window of senders_per_receiver_ probes moving
        // through its list at about the same pace, a receiver is probed by
        // about that many senders at once instead of by all of them (at 128
        // nodes, all at once made healthy first attempts time out).
        for (size_t k = 1; k < m; ++k) {
          const SubnetMember& dst = s.members[(i + k) % m];
          if (dst.node == src.node || !ctx.MeetsThisRound(src.node, dst.node)) continue;
          from.targets.push_back(
              {static_cast<uint32_t>(subnet_mtu_.size() - 1), static_cast<uint32_t>((i + k) % m)});
        }
      }
    }
  }

  // The sender's interface on a target's subnet.
  const std::string& SrcNic(const Peer& from, const Target& t) const {
    for (const SubnetMember& m : subnets_[t.subnet].members) {
      if (m.node == from.name) return m.nic->name;
    }
    static const std::string kNone;
    return kNone;
  }

  // The target as the agent takes it (agent/nics_command.cc); tcp_port 0
  // when its receiver did not listen there.
  Json TargetJson(const Peer& from, const Target& t) const {
    const Subnet& s = subnets_[t.subnet];
    const SubnetMember& dst = s.members[t.member];
    const Peer& to = peers_.at(dst.node);
    auto ep = to.endpoint.find(dst.addr);
    Json j = {{"node", dst.node},
              {"subnet", s.cidr},
              {"addr", dst.addr},
              {"src_nic", SrcNic(from, t)},
              {"dst_nic", dst.nic->name},
              {"tcp_port", 0},
              {"udp_port", 0},
              {"mtu_bytes", 0}};
    if (ep != to.endpoint.end() && ep->second.value("error", "").empty()) {
      j["tcp_port"] = ep->second.value("tcp_port", 0);
      j["udp_port"] = ep->second.value("udp_port", 0);
      if (mtu_probe_ && subnet_mtu_[t.subnet]) j["mtu_bytes"] = *subnet_mtu_[t.subnet];
    }
    return j;
  }

  bool Sendable(const Target& t) const {
    const SubnetMember& dst = subnets_[t.subnet].members[t.member];
    const Peer& to = peers_.at(dst.node);
    auto ep = to.endpoint.find(dst.addr);
    return ep != to.endpoint.end() && ep->second.value("error", "").empty() &&
           ep->second.value("tcp_port", 0) > 0;
  }

  // Every peer's first attempts go straight into their places in probes_,
  // made once for all: gathering them from per-peer lists afterwards held
  // them twice at once (32 MB of a 61 MB heap peak at 128 nodes).
  void Probe(StageContext& ctx) {
    size_t total = 0;
    for (size_t pi = 0; pi < peers_.size(); ++pi) {
      Peer& p = peers_.all()[pi];
      p.first_at = total;
      total += p.targets.size();
    }
    probes_.assign(total, NicProbe{});
    peers_.ForEach(ctx, {}, [&](Peer& p) {
      ctx.progress().Advance();
      std::vector<bool> answered(p.targets.size(), false);
      // A target whose receiver did not listen there is not sent: its
      // result says why (Unanswered).
      std::vector<size_t> send;
      for (size_t ti = 0; ti < p.targets.size(); ++ti) {
        if (Sendable(p.targets[ti])) send.push_back(ti);
      }
      for (size_t at = 0; p.listen.ok() && p.probe.ok() && at < send.size();
           at += kTargetsPerCall) {
        std::vector<size_t> chunk(
            send.begin() + static_cast<long>(at),
            send.begin() + static_cast<long>(std::min(send.size(), at + kTargetsPerCall)));
        ProbeChunk(ctx.clock(), p, chunk, &answered);
      }
      for (size_t ti = 0; ti < p.targets.size(); ++ti) {
        if (!answered[ti]) probes_[p.first_at + ti] = Unanswered(p, p.targets[ti]);
      }
      p.probed = true;
    });
    // A peer the fan-out did not visit (no longer usable) still has a
    // result for each of its targets, saying so, never an empty probe.
    for (Peer& p : peers_.all()) {
      if (p.probed) continue;
      p.probe = Status::Io("not probed: no longer usable");
      for (size_t ti = 0; ti < p.targets.size(); ++ti) {
        probes_[p.first_at + ti] = Unanswered(p, p.targets[ti]);
      }
    }
  }

  // One call of a sender's first attempts: `chunk` (target indices) sent,
  // each answer a NicProbe in probes_. p.probe: whether the agent reported.
  void ProbeChunk(Clock& clock, Peer& p, const std::vector<size_t>& chunk,
                  std::vector<bool>* answered) {
    Json send = Json::array();
    for (size_t ti : chunk) send.push_back(TargetJson(p, p.targets[ti]));
    double budget_ms = 10000 +
                       static_cast<double>(send.size()) * timeout_ms_ / senders_per_receiver_ +
                       static_cast<double>(timeout_ms_) * (1 + kDfTries);
    ProbeReply reply = AskToProbe(p,
                                  {{"targets", send},
                                   {"tokens", Json(tokens_)},
                                   {"timeout_ms", timeout_ms_},
                                   {"tries", kDfTries},
                                   {"parallel", senders_per_receiver_}},
                                  Deadline::In(clock, Millis(static_cast<long long>(budget_ms))));
    p.probe = reply.status;
    std::map<std::pair<std::string, std::string>, size_t> of;  // (node, addr) -> place in chunk
    for (size_t k = 0; k < chunk.size(); ++k) {
      of[{send[k]["node"].get<std::string>(), send[k]["addr"].get<std::string>()}] = k;
    }
    for (const Json& a : reply.probes) {
      auto it = of.find({a.value("node", ""), a.value("addr", "")});
      if (it == of.end()) continue;
      const Json& t = send[it->second];
      const size_t ti = chunk[it->second];
      NicProbe np = ProbeFromAgent(p.name, a, node_of_token_);
      np.src_nic = t["src_nic"];
      np.dst_nic = t["dst_nic"];
      probes_[p.first_at + ti] = std::move(np);
      (*answered)[ti] = true;
    }
  }

  // A target without an answer: an error saying why.
  NicProbe Unanswered(const Peer& p, const Target& t) const {
    const SubnetMember& member = subnets_[t.subnet].members[t.member];
    NicProbe np;
    np.src = p.name;
    np.dst = member.node;
    np.subnet = subnets_[t.subnet].cidr;
    np.addr = member.addr;
    np.src_nic = SrcNic(p, t);
    np.dst_nic = member.nic->name;
    np.tcp_state = "error";
    const Peer& to = peers_.at(member.node);
    auto ep = to.endpoint.find(member.addr);
    np.note = !p.listen.ok()    ? p.name + "'s agent did not start: " + p.listen.ToString()
              : !p.probe.ok()   ? p.name + "'s agent did not report: " + p.probe.ToString()
              : !to.listen.ok() ? member.node + "'s agent did not listen: " + to.listen.ToString()
              : ep == to.endpoint.end() ? member.node + " did not listen on " + member.addr
                                        : member.node + " could not listen on " + member.addr +
                                              ": " + ep->second.value("error", std::string("?"));
    return np;
  }

  // The (peer, target) of probes_ index i: the last peer whose first_at is
  // at or below i, found by bisection (peers are laid out in order). Not a
  // table: at 256 nodes that was 196,000 pairs of indices, 3 MB.
  std::pair<size_t, size_t> OriginOf(size_t i) const {
    const auto& all = peers_.all();
    size_t lo = 0, hi = all.size();
    while (hi - lo > 1) {
      const size_t mid = lo + (hi - lo) / 2;
      if (all[mid].first_at <= i) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    // Peers without targets share a first_at with the next: skip forward
    // to the one that holds i.
    while (lo + 1 < all.size() && all[lo].first_at + all[lo].targets.size() <= i) ++lo;
    return {lo, i - all[lo].first_at};
  }

  // Confirmation (nics_confirm.h): the probes whose first result fails are
  // sent again, one pair per node at a time, with a longer deadline; the
  // senders' agents still listen and probe (no "stop" yet). Returns the
  // retests by probe index; a retest that did not come back is an "error"
  // probe saying why.
  std::map<size_t, NicProbe> Retest(StageContext& ctx, const std::vector<NicProbe>& first) {
    std::vector<bool> untestable(first.size());
    for (size_t i = 0; i < first.size(); ++i) {
      const auto [pi, ti] = OriginOf(i);
      const Peer& p = peers_.all()[pi];
      untestable[i] = !Sendable(p.targets[ti]) || p.id < 0;
    }
    std::map<size_t, NicProbe> out;
    const int timeout_ms = timeout_ms_ * kRetestSlowdown;
    Deadline budget = Deadline::InSeconds(ctx.clock(), kRetestBudgetS);
    retest_plan_ = PlanNicsRetests(first, SelectNics(nodes_, first), untestable);
    for (const auto& round : retest_plan_.rounds) {
      std::map<std::string, std::vector<size_t>> of_src;
      std::vector<std::string> senders;
      for (size_t i : round) {
        if (of_src[first[i].src].empty()) senders.push_back(first[i].src);
        of_src[first[i].src].push_back(i);
      }
      if (budget.Passed()) {
        for (size_t i : round)
          out[i] = Unretested(
              first[i], "the retest budget of " + FormatSeconds(kRetestBudgetS) + " was spent");
        continue;
      }
      std::mutex mu;
      peers_.ForEach(ctx, senders, [&](Peer& p) {
        // A node-level pattern's samples (nics_confirm.h) must all fail
        // again for it to stand: they keep the burst's deadline, in a round
        // that is quiet already; a single pair's retest gets the longer one.
        const std::vector<size_t>& mine = of_src[p.name];
        bool samples = std::all_of(mine.begin(), mine.end(),
                                   [&](size_t i) { return retest_plan_.samples.count(i) > 0; });
        std::map<size_t, NicProbe> got =
            RetestFrom(ctx.clock(), p, first, mine, samples ? timeout_ms_ : timeout_ms);
        std::lock_guard<std::mutex> lock(mu);
        out.insert(got.begin(), got.end());
      });
      for (size_t i : round) {
        if (!out.count(i)) out[i] = Unretested(first[i], first[i].src + " was not usable");
      }
    }
    return out;
  }

  static NicProbe Unretested(const NicProbe& first, const std::string& why) {
    NicProbe p = first;
    p.tcp_state = "error";
    p.answered_by = Interned();
    p.note = why;
    return p;
  }

  // One sender's part of a retest round: its probes `mine`, at once: one
  // receiver's addresses in a quiet round, or the few peers a node-level
  // pattern is sampled with (nics_confirm.h), each waiting its own deadline.
  std::map<size_t, NicProbe> RetestFrom(Clock& clock, Peer& p, const std::vector<NicProbe>& first,
                                        const std::vector<size_t>& mine, int timeout_ms) {
    Json send = Json::array();
    for (size_t i : mine) {
      const auto [pi, ti] = OriginOf(i);
      const Peer& from = peers_.all()[pi];
      send.push_back(TargetJson(from, from.targets[ti]));
    }
    double budget_ms = 10000 + static_cast<double>(send.size()) * timeout_ms * (1 + kDfTries);
    ProbeReply reply = AskToProbe(p,
                                  {{"targets", send},
                                   {"tokens", Json(tokens_)},
                                   {"timeout_ms", timeout_ms},
                                   {"tries", kDfTries},
                                   {"parallel", std::max<int>(1, static_cast<int>(mine.size()))}},
                                  Deadline::In(clock, Millis(static_cast<long long>(budget_ms))));
    const Status& st = reply.status;
    std::map<size_t, NicProbe> out;
    for (size_t i : mine) {
      const Json* answer = nullptr;
      for (const Json& a : reply.probes) {
        if (a.value("node", "") == first[i].dst && a.value("addr", "") == first[i].addr)
          answer = &a;
      }
      if (answer == nullptr) {
        out[i] = Unretested(first[i], p.name + "'s agent did not report the retest: " +
                                          (st.ok() ? "no answer for it" : st.ToString()));
        continue;
      }
      NicProbe np = ProbeFromAgent(p.name, *answer, node_of_token_);
      np.src_nic = first[i].src_nic;
      np.dst_nic = first[i].dst_nic;
      out[i] = np;
    }
    return out;
  }

  void Judge(StageContext& ctx, const std::vector<NicProbe>& first,
             const std::map<size_t, NicProbe>& retests) {
    NicSelection sel = SelectNicsByPointer(nodes_, LatestProbes(first, retests));
    std::vector<std::string> names;
    for (const Peer& p : peers_) {
      names.push_back(p.name);
      if (!p.facts_error.empty()) Record(ctx, p.name, "facts", Outcome::kError, p.facts_error);
      if (!p.stop.ok() && p.listen.ok()) {
        Record(ctx, p.name, "stop", Outcome::kError, StopNotConfirmed(p));
      }
    }
    if (ctx.burnin_round()) {
      ctx.Record(NicsPairResults(first, WithRoundZeroNetwork(ctx, first, sel)));
      return;
    }
    RetestCounts counts;
    const std::map<size_t, Json> words =
        NotRetestedConfirmations(retest_plan_, first, retests, sel);
    RecordConfirmed(ctx, first, retests, sel, words, &counts);
    NoteConfirmedFailures(ctx, first, retests);
    ctx.RecordRetests("nics", counts);
    for (NodeResult& r : NicsNodeResults(names, sel)) ctx.Record(std::move(r));
    for (Verdict& cause : NicsCauses(sel)) ctx.RecordCause(std::move(cause));
    Json stored = SelectionJson(sel);
    Status s = ctx.store().SetRunMeta(ctx.run_id(), "nics", stored);
    if (!s.ok()) ctx.progress().Note("nics: selection not stored: " + s.ToString());
    if (sel.subnet) ctx.SetNetworkChoice(NetworkChoiceOf(sel));
    ctx.progress().Note("nics: " +
                        (sel.subnet ? sel.reason : "nothing to recommend: " + sel.reason));
    for (const std::string& l : EnvLines(sel)) ctx.progress().Note("  " + l);
  }

  // The TCP paths whose quiet retest failed the same way, for a later
  // stage probing the same sender and address (confirmed_paths.h). Only a
  // retest that ran: a path inferred from its node's samples is the node's
  // pattern, not that path's own confirmation.
  static void NoteConfirmedFailures(StageContext& ctx, const std::vector<NicProbe>& first,
                                    const std::map<size_t, NicProbe>& retests) {
    for (const auto& [i, again] : retests) {
      const NicProbe& p = first[i];
      if (p.tcp_state == "filtered" && again.tcp_state == p.tcp_state) {
        ctx.confirmed_paths().Add(p.src.str(), p.addr.str(), p.tcp_state, "nics");
      }
    }
  }

  // ConfirmedNicsResults, kProbesPerRecord probes at a time: their pair
  // results (two per probe, with evidence) are never all in memory.
  static void RecordConfirmed(StageContext& ctx, const std::vector<NicProbe>& first,
                              const std::map<size_t, NicProbe>& retests, const NicSelection& sel,
                              const std::map<size_t, Json>& not_retested, RetestCounts* counts) {
    for (size_t at = 0; at < first.size(); at += kProbesPerRecord) {
      const size_t end = std::min(first.size(), at + kProbesPerRecord);
      std::vector<NicProbe> part(first.begin() + static_cast<long>(at),
                                 first.begin() + static_cast<long>(end));
      std::map<size_t, NicProbe> part_retests;
      for (auto it = retests.lower_bound(at); it != retests.end() && it->first < end; ++it) {
        part_retests.emplace(it->first - at, it->second);
      }
      std::map<size_t, Json> part_words;
      for (auto it = not_retested.lower_bound(at); it != not_retested.end() && it->first < end;
           ++it) {
        part_words.emplace(it->first - at, it->second);
      }
      ctx.Record(ConfirmedNicsResults(part, part_retests, sel, counts, part_words));
    }
  }

  // A burn-in round judges its few probes on the network round 0 chose
  // (fail there, warn elsewhere), not on one its own probes would pick: the
  // probe whose address is its receiver's chosen address names the subnet.
  static NicSelection WithRoundZeroNetwork(const StageContext& ctx,
                                           const std::vector<NicProbe>& probes, NicSelection sel) {
    std::optional<NetworkChoice> choice = ctx.network_choice();
    sel.subnet.reset();
    if (!choice) return sel;
    for (const NicProbe& p : probes) {
      auto it = choice->address_of.find(p.dst);
      if (it != choice->address_of.end() && it->second == p.addr) {
        sel.subnet = p.subnet;
        break;
      }
    }
    return sel;
  }

  int timeout_ms_ = kDefaultTimeoutMs;
  int senders_per_receiver_ = kDefaultSendersPerReceiver;
  bool mtu_probe_ = true;
  int port_ = kDefaultPort;
  ListeningPeers<Peer> peers_;
  std::map<std::string, std::string> tokens_;
  std::map<std::string, std::string> node_of_token_;
  std::vector<NodeNics> nodes_;
  std::vector<Subnet> subnets_;
  std::vector<std::optional<long long>> subnet_mtu_;  // by subnet: the MTU its DF probes try
  std::vector<NicProbe> probes_;  // every target's first attempt, peer after peer
  NicsRetestPlan retest_plan_;    // what Retest retested, and why not the rest
};

}  // namespace

std::unique_ptr<Stage> MakeNicsStage() { return std::make_unique<NicsStage>(); }

}  // namespace cc
