// The phases of a stage whose agents listen while their peers probe them
// (the agent's phased commands, agent/ports_command.cc and
// agent/nics_command.cc), written once:
//   1. listen: every node's agent gets the stage's request and answers
//      "listening"; the request stays open;
//   2. probe: a sender's agent gets "probe" control lines on its open
//      request and answers "probes" (in chunks);
//   3. stop: every open request gets "stop", answers "stopped" and ends,
//      so nothing is left listening.
// What the listeners are, whom a sender probes and what a probe means
// stay with the stage; this file knows only the protocol and the fan-out.
//
// Threading: the per-peer calls touch only their peer; ListeningPeers runs
// them through the fleet's window, at most one call per peer at a time.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "common/deadline.h"
#include "orchestrator/run/fleet.h"
#include "orchestrator/run/stage.h"

namespace cc {

// One node's side of the phases. A stage's own peer type derives from it
// and adds what its phases learn.
struct ListeningPeer {
  NodeState* state = nullptr;
  std::string name;
  int64_t id = -1;  // the listening request; -1 until it was sent
  Status listen;    // phase 1: whether the agent listens
  Status stop;      // phase 3: whether its listeners closed
};

// Every wait below is judged by the clock it is given (StageContext::clock())
// or its deadline's.
//
// Phase 1 for one peer: sends `command` with `args` and waits up to
// timeout_s for its "listening" result. Sets p.id (once sent) and p.listen;
// returns the result's data, null when p.listen is not ok.
Json StartListening(ListeningPeer& p, Clock& clock, const std::string& command, const Json& args,
                    double timeout_s);

// What a sender's agent said to one "probe" control line.
struct ProbeReply {
  Status status;
  std::vector<Json> probes;  // the agent's probe objects, in target order (also when cut short)
  Json last;                 // the last chunk's other fields (e.g. elapsed_ms)
  double send_ms = 0;        // how long the control line took to send
};

// Phase 2 for one sender: a "probe" control line with `args` on p's open
// request, and its "probes" by `deadline`; an answer still missing then
// gets grace_s more (a starved session on a loaded controller is not a
// lost node), on the deadline's clock. kTimeout when it never came.
ProbeReply AskToProbe(ListeningPeer& p, const Json& args, Deadline deadline, double grace_s = 0);

// Phase 3 for one peer, in two calls so that every "stop" is sent before
// any wait: SendStop sends it (p.stop: whether that worked); AwaitStopped
// waits for "stopped" and then the request's end, timeout_s each, and sets
// p.stop. Both do nothing for a request never sent; AwaitStopped nothing
// after a failed SendStop.
void SendStop(ListeningPeer& p, Clock& clock, double timeout_s);
void AwaitStopped(ListeningPeer& p, Clock& clock, double timeout_s);
// For the result of a peer whose p.stop is not ok: what is in doubt and
// why it does no harm.
std::string StopNotConfirmed(const ListeningPeer& p);

// The peers of one run of such a stage, one per usable node, found by name,
// with the phases run over all of them through the fleet's window.
// REQUIRES: Peer derives from ListeningPeer.
template <typename Peer>
class ListeningPeers {
  static_assert(std::is_base_of_v<ListeningPeer, Peer>);

 public:
  void Add(NodeState* state) {
    Peer p;
    p.state = state;
    p.name = state->node->name;
    by_name_[p.name] = peers_.size();
    peers_.push_back(std::move(p));
  }

  std::vector<Peer>& all() { return peers_; }
  const std::vector<Peer>& all() const { return peers_; }
  auto begin() { return peers_.begin(); }
  auto end() { return peers_.end(); }
  auto begin() const { return peers_.begin(); }
  auto end() const { return peers_.end(); }
  size_t size() const { return peers_.size(); }
  // nullptr when `name` is not a peer.
  Peer* Find(const std::string& name) {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &peers_[it->second];
  }
  const Peer& at(const std::string& name) const { return peers_[by_name_.at(name)]; }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    for (const Peer& p : peers_) out.push_back(p.name);
    return out;
  }
  // Per peer the token its listeners answer with: "<prefix> <name>".
  std::map<std::string, std::string> Tokens(const std::string& prefix) const {
    std::map<std::string, std::string> out;
    for (const Peer& p : peers_) out[p.name] = prefix + " " + p.name;
    return out;
  }

  // fn for each peer among `names` (all when empty) that is still usable,
  // at most the fleet's fanout at once.
  void ForEach(StageContext& ctx, const std::vector<std::string>& names,
               const std::function<void(Peer&)>& fn) {
    ctx.fleet().ForEach(names, [&](NodeState& s) {
      if (Peer* p = Find(s.node->name)) fn(*p);
    });
  }

  // Phase 1 on every peer at once: args(p) goes out as `command`, and the
  // "listening" data to listening(p, data), which returns p.listen. One
  // progress step per peer.
  void Listen(StageContext& ctx, const std::string& command, double timeout_s,
              const std::function<Json(Peer&)>& args,
              const std::function<Status(Peer&, const Json&)>& listening) {
    ForEach(ctx, {}, [&](Peer& p) {
      Json data = StartListening(p, ctx.clock(), command, args(p), timeout_s);
      if (p.listen.ok()) p.listen = listening(p, data);
      ctx.progress().Advance();
    });
  }

  // Phase 3 on every peer but those `skip` names: every "stop" first, then
  // the waits, all at once; after(p) sees p.stop after each step that ran.
  // One progress step per peer.
  void Stop(StageContext& ctx, double timeout_s, const std::function<bool(const Peer&)>& skip,
            const std::function<void(Peer&)>& after) {
    for (Peer& p : peers_) {
      if (p.id < 0 || skip(p)) continue;
      SendStop(p, ctx.clock(), timeout_s);
      after(p);
    }
    ForEach(ctx, {}, [&](Peer& p) {
      if (p.id >= 0 && p.stop.ok() && !skip(p)) {
        AwaitStopped(p, ctx.clock(), timeout_s);
        after(p);
      }
      ctx.progress().Advance();
    });
  }
  void Stop(StageContext& ctx, double timeout_s) {
    Stop(
        ctx, timeout_s, [](const Peer&) { return false; }, [](Peer&) {});
  }

 private:
  std::vector<Peer> peers_;
  std::map<std::string, size_t> by_name_;
};

}  // namespace cc
