// `ports`: a reachability matrix for every port a distributed job needs,
// in both directions, between every pair of usable nodes (DESIGN.md step
// 5, issue 5). Three phases over every node's agent (agent/ports_command.cc):
//   1. `ports`: each node listens on its port set and answers a token;
//   2. `probe`: sent to every node at once; each connects to every other
//      node's ports, `parallel` at a time;
//   3. `stop`: every listener closes.
// Then one PairResult per (sender, receiver, port) in one transaction, a
// NodeResult "listen" per node, and the attribution's verdicts as
// NodeResults "verdict:<kind>" (ports_verdict.h); a summary goes to the
// run's meta under "ports".
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <random>

#include "common/hostlist.h"
#include "orchestrator/agent_wait.h"
#include "orchestrator/ports_plan.h"
#include "orchestrator/ports_verdict.h"
#include "orchestrator/stages_decl.h"

namespace cc {
namespace {

constexpr double kListenTimeoutS = 30;
constexpr double kStopTimeoutS = 15;

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && read(fd, raw.data(), bytes) == static_cast<ssize_t>(bytes);
  if (fd >= 0) close(fd);
  if (!ok) {
    std::random_device rd;
    for (char& c : raw) c = static_cast<char>(rd());
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

double MsSince(Clock::time_point start) {
  return std::round(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
}

Outcome OutcomeOfWait(const Status& s) {
  return s.Is(ErrorKind::kTimeout) ? Outcome::kHang : Outcome::kError;
}

// One node's side of the stage.
struct Peer {
  NodeState* state = nullptr;
  std::string name;
  int64_t id = -1;         // the `ports` request
  Status listen;           // phase 1
  ReceiverInfo info;
  Json listening;          // the agent's "listening" data
  std::vector<size_t> targets;  // indexes into the plan, this node as sender
  Status probe;            // phase 2
  std::vector<Json> probes;     // the agent's answers, in target order
  Status stop;             // phase 3
  Json timing = Json::object();  // send_ms, agent_ms, probe_ms
};

class PortsStage : public Stage {
 public:
  std::string name() const override { return "ports"; }

  Status Run(StageContext& ctx) override {
    auto settings = ReadPortsSettings(ctx.inventory().StageSettings("ports"));
    if (!settings.ok()) return settings.status();
    settings_ = *settings;
    for (NodeState* s : ctx.fleet().Usable()) {
      peers_.push_back(Peer{});
      peers_.back().state = s;
      peers_.back().name = s->node->name;
      by_name_[s->node->name] = peers_.size() - 1;
    }
    if (peers_.size() < 2) {
      for (Peer& p : peers_) {
        RecordNode(ctx, p.name, "listen", Outcome::kSkip,
             "the ports stage needs at least two usable nodes", Json::object());
      }
      return Status::Ok();
    }
    std::string run_token = RandomHex(12);
    for (Peer& p : peers_) tokens_[p.name] = "clustercheck-ports " + run_token + " " + p.name;
    ctx.progress().StartStage("ports", static_cast<long long>(peers_.size()) * 3, "steps");
    auto t0 = Clock::now();
    Listen(ctx);
    auto t1 = Clock::now();
    Probe(ctx);
    auto t2 = Clock::now();
    Stop(ctx);
    ctx.progress().FinishStage();
    Record(ctx, std::chrono::duration<double, std::milli>(t1 - t0).count(),
           std::chrono::duration<double, std::milli>(t2 - t1).count());
    return Status::Ok();
  }

 private:
  // The node's address on the network the nics stage selected, when it
  // ran; the inventory's address otherwise.
  std::string AddressOf(StageContext& ctx, const cc::Node& node) const {
    Json sel = ctx.Selection("addresses");
    if (sel.is_object() && sel.contains(node.name) && sel[node.name].is_string()) {
      return sel[node.name];
    }
    return node.address;
  }

  // The most targets one sender can get, for the agents' hold deadline.
  size_t MaxTargets() const {
    return (peers_.size() - 1) * (settings_.ports.size() + 1 + settings_.ephemeral_samples);
  }

  void Listen(StageContext& ctx) {
    bool ssh = ctx.inventory().transport != "local";
    double hold_s = kListenTimeoutS + kStopTimeoutS + 60 +
                    ProbePhaseMs(MaxTargets(), settings_.parallel, settings_.timeout_ms) / 1000.0;
    ctx.fleet().ForEach({}, [&](NodeState& s) {
      auto it = by_name_.find(s.node->name);
      if (it == by_name_.end()) return;
      Peer& p = peers_[it->second];
      p.info.node = p.name;
      p.info.addr = AddressOf(ctx, *s.node);
      if (ssh) p.info.ssh_port = s.node->ssh.port;
      Json args = {{"listen_addr", p.info.addr},
                   {"ports", settings_.ports},
                   {"ephemeral_samples", settings_.ephemeral_samples},
                   {"token", tokens_[p.name]},
                   {"hold_s", hold_s}};
      Deadline d = Deadline::InSeconds(kListenTimeoutS);
      auto id = s.agent->Send("ports", args, d);
      if (!id.ok()) {
        p.listen = id.status();
      } else {
        p.id = *id;
        std::vector<Json> got;
        p.listen = WaitForResult(*s.agent, p.id, "listening", d, false, &got);
        if (p.listen.ok()) {
          p.listening = got.at(0);
          p.listen = ParseListening(p.listening, &p.info);
        }
      }
      ctx.progress().Advance();
    });
  }

  void Probe(StageContext& ctx) {
    std::vector<std::string> senders;
    std::vector<ReceiverInfo> receivers;
    for (const Peer& p : peers_) {
      if (!p.listen.ok()) continue;
      senders.push_back(p.name);
      receivers.push_back(p.info);
    }
    plan_ = PlanProbes(senders, receivers, settings_.ports);
    for (size_t i = 0; i < plan_.size(); ++i) peers_[by_name_[plan_[i].src]].targets.push_back(i);
    // Every sender gets its control line from its own worker, so all
    // start together (a slow ssh write to one does not delay the rest).
    const Json tokens(tokens_);
    ctx.fleet().ForEach({}, [&](NodeState& s) {
      auto it = by_name_.find(s.node->name);
      if (it == by_name_.end()) return;
      ProbeOne(peers_[it->second], tokens);
      ctx.progress().Advance();
    });
  }

  void ProbeOne(Peer& p, const Json& tokens) {
    if (!p.listen.ok()) return;
    Json targets = Json::array();
    for (size_t i : p.targets) {
      const PlannedProbe& pp = plan_[i];
      targets.push_back({{"node", pp.dst}, {"addr", pp.addr}, {"port", pp.port},
                         {"plain", pp.plain}});
    }
    auto start = Clock::now();
    Deadline deadline = Deadline::In(
        Millis(ProbePhaseMs(p.targets.size(), settings_.parallel, settings_.timeout_ms)));
    p.probe = p.state->agent->SendControl(p.id, "probe",
                                          {{"targets", targets},
                                           {"tokens", tokens},
                                           {"timeout_ms", settings_.timeout_ms},
                                           {"parallel", settings_.parallel}},
                                          deadline);
    p.timing["send_ms"] = MsSince(start);
    if (p.probe.ok()) {
      Json last;
      p.probe = WaitForResult(*p.state->agent, p.id, "probes", deadline, true, &p.probes, &last);
      if (last.is_object() && last.contains("elapsed_ms")) p.timing["agent_ms"] = last["elapsed_ms"];
    }
    p.timing["probe_ms"] = MsSince(start);
    if (p.probe.ok() && p.probes.size() != p.targets.size()) {
      p.probe = Status::Protocol("agent answered " + std::to_string(p.probes.size()) +
                                 " probes for " + std::to_string(p.targets.size()) + " targets");
    }
  }

  void Stop(StageContext& ctx) {
    for (Peer& p : peers_) {
      if (p.id < 0) continue;
      p.stop = p.state->agent->SendControl(p.id, "stop", Json::object(),
                                           Deadline::InSeconds(kStopTimeoutS));
    }
    ctx.fleet().ForEach({}, [&](NodeState& s) {
      auto it = by_name_.find(s.node->name);
      if (it == by_name_.end()) return;
      Peer& p = peers_[it->second];
      if (p.id >= 0 && p.stop.ok()) {
        std::vector<Json> unused;
        Status got = WaitForResult(*s.agent, p.id, "stopped", Deadline::InSeconds(kStopTimeoutS),
                             false, &unused);
        // The `end` follows "stopped"; a listener failure ends with an error.
        p.stop = got.ok() ? WaitForEnd(*s.agent, p.id, Deadline::InSeconds(kStopTimeoutS)) : got;
      }
      ctx.progress().Advance();
    });
  }

  static void RecordNode(StageContext& ctx, const std::string& node, const std::string& check,
                   Outcome o, const std::string& message, Json evidence,
                   const std::string& value = "") {
    ctx.Record(NodeCheck("ports", node, check, o, message, std::move(evidence), value));
  }

  void Record(StageContext& ctx, double listen_ms, double probe_ms);
  void RecordListen(StageContext& ctx, const Peer& p);
  std::vector<PairResult> PairResults(std::vector<PortCell>* cells);
  void RecordVerdicts(StageContext& ctx, const std::vector<PortCell>& cells);

  PortsSettings settings_;
  std::vector<Peer> peers_;
  std::map<std::string, size_t> by_name_;
  std::map<std::string, std::string> tokens_;
  std::vector<PlannedProbe> plan_;
};

void PortsStage::RecordListen(StageContext& ctx, const Peer& p) {
  Json ev = p.listening.is_object() ? p.listening : Json::object();
  ev["address"] = p.info.addr;
  ev["timing"] = p.timing;
  if (!p.listen.ok()) {
    RecordNode(ctx, p.name, "listen", OutcomeOfWait(p.listen),
         "could not listen: " + p.listen.ToString(), ev);
    return;
  }
  std::string eph = p.info.ephemeral.empty() ? "" :
      " and " + std::to_string(p.info.ephemeral.size()) + " ephemeral ports";
  std::string msg = "listened on " + FormatTcpPorts({p.info.bound.begin(), p.info.bound.end()}) +
                    eph + " at " + ev.value("address", p.info.addr);
  Outcome o = Outcome::kPass;
  for (const auto& [port, err] : p.info.bind_errors) {
    msg += "; tcp/" + std::to_string(port) + ": " + err;
    o = Outcome::kWarn;
  }
  std::string note = p.listening.value("note", std::string());
  if (!note.empty()) msg += "; " + note;
  if (!p.stop.ok()) {
    msg += "; stop not confirmed (" + p.stop.ToString() +
           "): its listeners close when the agent exits at the end of the run";
    o = Worse(o, Outcome::kError);
  }
  RecordNode(ctx, p.name, "listen", o, msg, ev);
}

std::vector<PairResult> PortsStage::PairResults(std::vector<PortCell>* cells) {
  std::vector<PairResult> out;
  for (const Peer& sender : peers_) {
    for (size_t k = 0; k < sender.targets.size(); ++k) {
      const PlannedProbe& pp = plan_[sender.targets[k]];
      PairResult r;
      r.stage = "ports";
      r.src = pp.src;
      r.dst = pp.dst;
      r.check = "tcp/" + std::to_string(pp.port);
      r.evidence = {{"kind", PortKindName(pp.kind)}, {"addr", pp.addr}};
      if (!pp.bind_error.empty()) r.evidence["bind_error"] = pp.bind_error;
      if (!sender.probe.ok()) {
        r.outcome = OutcomeOfWait(sender.probe);
        r.state = "error";
        r.message = pp.src + "'s agent did not report its probes: " + sender.probe.ToString();
      } else {
        const Json& a = sender.probes[k];
        ProbeJudgement j = JudgeProbe(pp, a.value("state", ""), a.value("reply", ""),
                                      a.value("note", ""), tokens_);
        r.outcome = j.outcome;
        r.state = j.state;
        r.message = j.message;
        for (const char* key : {"ms", "errno", "reply", "note"}) {
          if (a.contains(key)) r.evidence[key] = a[key];
        }
      }
      cells->push_back({pp.src, pp.dst, pp.port, pp.kind, r.state, r.outcome});
      out.push_back(std::move(r));
    }
  }
  // Pairs with a node whose agent never listened (so it neither received
  // nor sent): one error per listed port, with the reason.
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

void PortsStage::RecordVerdicts(StageContext& ctx, const std::vector<PortCell>& cells) {
  std::vector<std::string> nodes;
  std::map<std::string, std::pair<int, int>> ranges;
  for (const Peer& p : peers_) {
    nodes.push_back(p.name);
    if (p.info.ephemeral_range) ranges[p.name] = *p.info.ephemeral_range;
  }
  for (const PortVerdict& v : AttributePorts(nodes, cells, ranges)) {
    Json ev = v.evidence;
    ev["kind"] = v.kind;
    ev["nodes"] = v.nodes;
    ev["next_step"] = v.next_step;
    Json pairs = Json::array();
    for (const auto& [a, b] : v.pairs) pairs.push_back({a, b});
    ev["node_pairs"] = pairs;
    std::string node = v.kind == "nothing" || v.kind == "port-everywhere" ? "*"
                       : v.kind == "one-way" || v.kind == "pair"       ? v.nodes.at(0)
                                                                       : FoldHostlist(v.nodes);
    std::string value = FormatTcpPorts(v.ports);
    if (value.size() > 200) value = value.substr(0, 197) + "...";
    RecordNode(ctx, node, "verdict:" + v.kind, v.severity, v.message, ev, value);
  }
}

void PortsStage::Record(StageContext& ctx, double listen_ms, double probe_ms) {
  for (const Peer& p : peers_) RecordListen(ctx, p);
  std::vector<PortCell> cells;
  std::vector<PairResult> pairs = PairResults(&cells);
  Json by_state = Json::object();
  double agent_max = 0, send_max = 0;
  for (const Peer& p : peers_) {
    for (auto [key, max] : {std::pair{"agent_ms", &agent_max}, std::pair{"send_ms", &send_max}}) {
      if (p.timing.contains(key) && p.timing[key].is_number()) {
        *max = std::max(*max, p.timing[key].get<double>());
      }
    }
  }
  for (const PairResult& r : pairs) by_state[r.state] = by_state.value(r.state, 0) + 1;
  size_t n = pairs.size();
  ctx.Record(std::move(pairs));
  RecordVerdicts(ctx, cells);
  Json summary = {{"nodes", peers_.size()},
                  {"ports", settings_.ports},
                  {"ephemeral_samples", settings_.ephemeral_samples},
                  {"timeout_ms", settings_.timeout_ms},
                  {"parallel", settings_.parallel},
                  {"probes", plan_.size()},
                  {"results", n},
                  {"by_state", by_state},
                  {"listen_ms", listen_ms},
                  {"probe_ms", probe_ms},
                  {"agent_probe_ms_max", agent_max},
                  {"send_ms_max", send_max}};
  Status s = ctx.store().SetRunMeta(ctx.run_id(), "ports", summary);
  if (!s.ok()) ctx.progress().Note("ports: summary not stored: " + s.ToString());
  char line[160];
  std::snprintf(line, sizeof line, "ports: %zu probes between %zu nodes in %.2f s (%.0f/s)",
                plan_.size(), peers_.size(), probe_ms / 1000,
                probe_ms > 0 ? plan_.size() / (probe_ms / 1000) : 0.0);
  ctx.progress().Note(line + std::string(": ") + by_state.dump());
}

}  // namespace

std::unique_ptr<Stage> MakePortsStage() { return std::make_unique<PortsStage>(); }

}  // namespace cc
