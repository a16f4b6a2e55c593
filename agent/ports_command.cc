// `ports`: one node's part of the ports stage, in three phases on one
// request (control lines on stdin, protocol.h):
//
// 1. request args {listen_addr, ports:[int], ephemeral_samples, token,
//    hold_s}: binds every port (and a sample of ip_local_port_range) and
//    answers each connection with `token`; emits
//    result "listening" {address, bound:[ports], in_use:[{port, error}],
//                        ephemeral_range:[lo,hi]|null, ephemeral_sample:[..],
//                        note}
// 2. control "probe" {targets:[{node, addr, port, plain}], tokens:{node:
//    token}, timeout_ms, parallel}: connects to every target, at most
//    `parallel` at once; emits result "probes" {probes:[{node, addr, port,
//    state, ms, errno, reply, note}], last, total, elapsed_ms} in chunks of
//    kProbeChunk; `last` is true on the final chunk. A target is checked
//    against tokens[node] unless `plain` (a port the receiver could not
//    bind, or its sshd).
// 3. control "stop": closes every listener, emits result "stopped"
//    {accepted} and ends.
// stdin closing, an error, or no "stop" within hold_s also closes every
// listener: nothing stays listening.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "agent/commands_decl.h"
#include "agent/port_listener.h"
#include "agent/port_probe.h"
#include "agent/sysroot.h"

namespace cc::agent {
namespace {

constexpr int kMaxEphemeralSamples = 64;
constexpr int kMaxPorts = 1024;
constexpr int kSlotTries = 32;
constexpr size_t kProbeChunk = 1000;
constexpr double kDefaultHoldS = 600;

struct ListenArgs {
  std::string listen_addr;
  std::vector<int> ports;
  int ephemeral_samples = 0;
  std::string token;
  double hold_s = kDefaultHoldS;
};

bool IsPort(const Json& v) {
  return v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 65535;
}

Status ParseListenArgs(const Json& args, ListenArgs* out) {
  if (!args.is_object()) return Status::BadArgument("ports: args must be an object");
  if (args.contains("listen_addr") && !args["listen_addr"].is_null()) {
    if (!args["listen_addr"].is_string()) {
      return Status::BadArgument("ports: args.listen_addr must be a string");
    }
    out->listen_addr = args["listen_addr"];
  }
  if (args.contains("ports")) {
    const Json& p = args["ports"];
    if (!p.is_array() || p.size() > kMaxPorts) {
      return Status::BadArgument("ports: args.ports must be an array of at most " +
                                 std::to_string(kMaxPorts) + " ports");
    }
    for (const Json& v : p) {
      if (!IsPort(v)) return Status::BadArgument("ports: args.ports holds " + v.dump());
      out->ports.push_back(v.get<int>());
    }
  }
  if (args.contains("ephemeral_samples")) {
    const Json& e = args["ephemeral_samples"];
    if (!e.is_number_integer() || e.get<int64_t>() < 0 || e.get<int64_t>() > kMaxEphemeralSamples) {
      return Status::BadArgument("ports: args.ephemeral_samples must be 0.." +
                                 std::to_string(kMaxEphemeralSamples));
    }
    out->ephemeral_samples = e.get<int>();
  }
  if (!args.contains("token") || !args["token"].is_string()) {
    return Status::BadArgument("ports: args.token (a string) is required");
  }
  out->token = args["token"];
  if (out->token.empty() || out->token.size() > 200 ||
      out->token.find_first_of("\r\n") != std::string::npos) {
    return Status::BadArgument("ports: args.token must be 1..200 characters on one line");
  }
  if (args.contains("hold_s")) {
    if (!args["hold_s"].is_number() || args["hold_s"].get<double>() <= 0) {
      return Status::BadArgument("ports: args.hold_s must be a positive number");
    }
    out->hold_s = args["hold_s"];
  }
  return Status::Ok();
}

std::string ErrnoText(int err) {
  const char* name = err == EADDRINUSE ? "EADDRINUSE" : err == EACCES ? "EACCES" : nullptr;
  return name ? std::string(name) + ": " + strerror(err) : std::string(strerror(err));
}

// Binds the sample of the ephemeral range: per slot the first port that
// is free and not one of the listed ports.
Json BindEphemeral(PortListeners& l, int lo, int hi, int n, const std::set<int>& listed) {
  Json sample = Json::array();
  int slots = static_cast<int>(SpreadPorts(lo, hi, n).size());
  for (int i = 0; i < slots; ++i) {
    for (int p : SlotCandidates(lo, hi, slots, i, kSlotTries)) {
      if (listed.count(p)) continue;
      if (l.Bind(p) == 0) {
        sample.push_back(p);
        break;
      }
    }
  }
  return sample;
}

Status Listen(const ListenArgs& a, CommandContext& ctx, PortListeners& l) {
  std::string note;
  Status s = l.SetAddress(a.listen_addr, &note);
  if (!s.ok()) return s.WithContext("ports");
  Json bound = Json::array(), in_use = Json::array();
  std::set<int> listed(a.ports.begin(), a.ports.end());
  for (int p : listed) {
    int err = l.Bind(p);
    if (err == 0) {
      bound.push_back(p);
    } else {
      in_use.push_back({{"port", p}, {"error", ErrnoText(err)}});
    }
  }
  Json range = nullptr, sample = Json::array();
  if (a.ephemeral_samples > 0) {
    Sysroot root(ctx.root());
    auto text = root.Read("/proc/sys/net/ipv4/ip_local_port_range");
    auto parsed =
        text.ok() ? ParseLocalPortRange(*text) : Result<std::pair<int, int>>(text.status());
    if (parsed.ok()) {
      range = {parsed->first, parsed->second};
      sample = BindEphemeral(l, parsed->first, parsed->second, a.ephemeral_samples, listed);
    } else {
      ctx.Log("warn", "no ephemeral sample: " + parsed.status().message());
    }
  }
  s = l.Start(a.token);
  if (!s.ok()) return s.WithContext("ports");
  ctx.Result("listening", {{"address", l.address()},
                           {"bound", bound},
                           {"in_use", in_use},
                           {"ephemeral_range", range},
                           {"ephemeral_sample", sample},
                           {"note", note}});
  return Status::Ok();
}

Status ParseProbe(const Json& args, std::vector<ProbeTarget>* targets, ProbeOptions* o) {
  if (!args.is_object() || !args.contains("targets") || !args["targets"].is_array()) {
    return Status::BadArgument("probe: args.targets must be an array");
  }
  Json tokens = args.value("tokens", Json::object());
  if (!tokens.is_object()) return Status::BadArgument("probe: args.tokens must be an object");
  for (const Json& t : args["targets"]) {
    if (!t.is_object() || !t.contains("addr") || !t["addr"].is_string() || !t.contains("port") ||
        !IsPort(t["port"])) {
      return Status::BadArgument("probe: a target needs addr (string) and port (1..65535): " +
                                 t.dump().substr(0, 200));
    }
    ProbeTarget pt;
    pt.node = t.value("node", std::string());
    pt.addr = t["addr"];
    pt.port = t["port"];
    if (!t.value("plain", false) && tokens.contains(pt.node) && tokens[pt.node].is_string()) {
      pt.token = tokens[pt.node];
    }
    targets->push_back(std::move(pt));
  }
  Json tm = args.value("timeout_ms", Json(o->timeout_ms));
  Json par = args.value("parallel", Json(o->parallel));
  if (!tm.is_number_integer() || tm.get<int64_t>() < 1 || tm.get<int64_t>() > 600000) {
    return Status::BadArgument("probe: timeout_ms must be 1..600000");
  }
  if (!par.is_number_integer() || par.get<int64_t>() < 1 || par.get<int64_t>() > 65536) {
    return Status::BadArgument("probe: parallel must be 1..65536");
  }
  o->timeout_ms = tm.get<int>();
  o->parallel = par.get<int>();
  return Status::Ok();
}

Status Probe(const Json& args, CommandContext& ctx, int listeners) {
  std::vector<ProbeTarget> targets;
  ProbeOptions o;
  Status s = ParseProbe(args, &targets, &o);
  if (!s.ok()) return s;
  o.parallel = UsableParallel(o.parallel, listeners + 16);
  auto start = std::chrono::steady_clock::now();
  std::vector<ProbeResult> results = ProbeAll(targets, o);
  double elapsed_ms = std::round(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  Json chunk = Json::array();
  for (size_t i = 0; i < targets.size(); ++i) {
    const ProbeResult& r = results[i];
    Json p = {{"node", targets[i].node},          {"addr", targets[i].addr},
              {"port", targets[i].port},          {"state", ProbeStateName(r.state)},
              {"ms", std::round(r.ms * 10) / 10}, {"errno", r.err}};
    if (!r.reply.empty()) p["reply"] = r.reply;
    if (!r.note.empty()) p["note"] = r.note;
    chunk.push_back(std::move(p));
    bool last = i + 1 == targets.size();
    if (chunk.size() >= kProbeChunk || last) {
      ctx.Result("probes", {{"probes", chunk},
                            {"last", last},
                            {"total", targets.size()},
                            {"elapsed_ms", elapsed_ms}});
      chunk = Json::array();
    }
  }
  if (targets.empty()) {
    ctx.Result(
        "probes",
        {{"probes", Json::array()}, {"last", true}, {"total", 0}, {"elapsed_ms", elapsed_ms}});
  }
  return Status::Ok();
}

}  // namespace

Status RunPorts(const Json& args, CommandContext& ctx) {
  ListenArgs a;
  Status s = ParseListenArgs(args, &a);
  if (!s.ok()) return s;
  // Destruction closes every listener on every path out of here.
  PortListeners listeners;
  s = Listen(a, ctx, listeners);
  if (!s.ok()) return s;
  Deadline hold = Deadline::InSeconds(a.hold_s);
  for (;;) {
    std::optional<Json> c = ctx.NextControl(hold);
    if (!c) {
      listeners.Stop();
      if (hold.Passed()) {
        return Status::Timeout("ports: no stop within " + std::to_string(a.hold_s) +
                               " s; listeners closed");
      }
      return Status::Ok();  // the controller went away
    }
    std::string cmd = c->value("cmd", "");
    if (cmd == "probe") {
      s = Probe(c->value("args", Json::object()), ctx, static_cast<int>(listeners.ports().size()));
      if (!s.ok()) return s;
    } else if (cmd == "stop") {
      listeners.Stop();
      ctx.Result("stopped", {{"accepted", listeners.accepted()}});
      return Status::Ok();
    } else {
      ctx.Log("warn", "ports: ignored control '" + cmd + "' (want probe or stop)");
    }
  }
}

}  // namespace cc::agent
