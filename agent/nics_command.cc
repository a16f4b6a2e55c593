// `nics`: one node's part of the nics stage, in three phases on one request
// (control lines on stdin, as `ports` does):
//
// 1. request args {addresses: [{nic, addr}], token, hold_s, port}: on
//    every address a TCP listener answering `token` and a UDP echo
//    (df_probe.h), each on `port`, or a free port when it is 0 or taken; emits result "listening"
//    {listeners: [{nic, addr, tcp_port, udp_port, error}]} (error "" when both listen).
// 2. control "probe" {targets: [{node, subnet, addr, tcp_port, udp_port,
//    mtu_bytes}], tokens: {node: token}, timeout_ms, tries, parallel}: a
//    TCP connect with token check to every target, then a small and a
//    full-size DF datagram (mtu_bytes; 0 = no MTU test); emits result
//    "probes" {probes: [{node, subnet, addr, state, reply, errno, note,
//    mtu_bytes, mtu_state, mtu_note, path_mtu}], last: true}.
// 3. control "stop": closes everything, emits "stopped" and ends.
// stdin closing or no "stop" within hold_s also closes everything.
#include <cstring>
#include <memory>

#include "agent/commands_decl.h"
#include "agent/df_probe.h"
#include "agent/port_listener.h"
#include "agent/port_probe.h"

namespace cc::agent {
namespace {

constexpr size_t kMaxAddresses = 256;
constexpr size_t kMaxTargets = 65536;

struct Endpoint {
  std::string nic;
  std::string addr;
  std::unique_ptr<PortListeners> tcp;
  std::unique_ptr<UdpEcho> udp;
  std::string error;
};

Status ListenAll(const Json& args, std::vector<Endpoint>* eps, double* hold_s) {
  if (!args.is_object() || !args.contains("addresses") || !args["addresses"].is_array() ||
      args["addresses"].size() > kMaxAddresses) {
    return Status::BadArgument("nics: args.addresses must be an array of at most " +
                               std::to_string(kMaxAddresses) + " {nic, addr}");
  }
  if (!args.contains("token") || !args["token"].is_string() ||
      args["token"].get<std::string>().empty() || args["token"].get<std::string>().size() > 200) {
    return Status::BadArgument("nics: args.token must be a string of 1..200 characters");
  }
  std::string token = args["token"];
  *hold_s = args.value("hold_s", 600.0);
  const Json& pj = args.value("port", Json(0));
  if (!pj.is_number_integer() || pj.get<int64_t>() < 0 || pj.get<int64_t>() > 65535) {
    return Status::BadArgument("nics: args.port must be 0..65535");
  }
  const int port = pj.get<int>();
  if (*hold_s <= 0) return Status::BadArgument("nics: args.hold_s must be positive");
  for (const Json& a : args["addresses"]) {
    if (!a.is_object() || !a.contains("addr") || !a["addr"].is_string()) {
      return Status::BadArgument("nics: an address needs addr (string): " +
                                 a.dump().substr(0, 200));
    }
    Endpoint e;
    e.nic = a.value("nic", std::string());
    e.addr = a["addr"];
    e.tcp = std::make_unique<PortListeners>();
    e.udp = std::make_unique<UdpEcho>();
    std::string note;
    Status s = e.tcp->SetAddress(e.addr, &note);
    // A listener on all addresses would answer for another interface's
    // address: only the address itself will do.
    if (s.ok() && !note.empty()) s = Status::Io(note);
    if (s.ok()) {
      // The same port on every node makes a shared address (docker0's
      // 172.17.0.1) show for what it is: a peer's probe lands on the
      // sender's own listener and gets the sender's token.
      int err = port > 0 ? e.tcp->Bind(port) : -1;
      if (err != 0) err = e.tcp->Bind(0);
      if (err != 0) s = Status::Io("tcp bind " + e.addr + ": " + strerror(err));
    }
    if (s.ok()) s = e.udp->Bind(e.addr, port);
    if (s.ok()) s = e.tcp->Start(token);
    if (s.ok()) s = e.udp->Start(token);
    if (!s.ok()) e.error = s.message();
    eps->push_back(std::move(e));
  }
  return Status::Ok();
}

Status Probe(const Json& args, CommandContext& ctx) {
  if (!args.is_object() || !args.contains("targets") || !args["targets"].is_array() ||
      args["targets"].size() > kMaxTargets) {
    return Status::BadArgument("probe: args.targets must be an array");
  }
  Json tokens = args.value("tokens", Json::object());
  if (!tokens.is_object()) return Status::BadArgument("probe: args.tokens must be an object");
  ProbeOptions o;
  o.timeout_ms = args.value("timeout_ms", 1000);
  o.parallel = UsableParallel(args.value("parallel", 64), 64);
  int tries = args.value("tries", 3);
  if (o.timeout_ms < 1 || o.timeout_ms > 600000 || tries < 1 || tries > 20) {
    return Status::BadArgument("probe: timeout_ms must be 1..600000 and tries 1..20");
  }
  std::vector<ProbeTarget> tcp;
  std::vector<DfTarget> df;
  std::vector<size_t> df_of;  // target index -> index into df (or npos)
  for (const Json& t : args["targets"]) {
    if (!t.is_object() || !t.contains("addr") || !t["addr"].is_string() ||
        !t.value("tcp_port", Json(0)).is_number_integer()) {
      return Status::BadArgument("probe: a target needs addr and tcp_port: " +
                                 t.dump().substr(0, 200));
    }
    ProbeTarget pt;
    pt.node = t.value("node", std::string());
    pt.addr = t["addr"];
    pt.port = t.value("tcp_port", 0);
    if (tokens.contains(pt.node) && tokens[pt.node].is_string()) pt.token = tokens[pt.node];
    int bytes = t.value("mtu_bytes", 0);
    int udp = t.value("udp_port", 0);
    if (bytes >= 96 && bytes <= 65535 && udp > 0 && udp <= 65535) {
      df_of.push_back(df.size());
      df.push_back({pt.addr, udp, bytes, pt.token});
    } else {
      df_of.push_back(std::string::npos);
    }
    tcp.push_back(std::move(pt));
  }
  std::vector<ProbeResult> tr = ProbeAll(tcp, o);
  std::vector<DfResult> dr = DfProbeAll(df, o.timeout_ms, tries);
  Json probes = Json::array();
  for (size_t i = 0; i < tcp.size(); ++i) {
    const Json& t = args["targets"][i];
    Json p = {{"node", tcp[i].node}, {"subnet", t.value("subnet", std::string())},
              {"addr", tcp[i].addr}, {"state", ProbeStateName(tr[i].state)},
              {"errno", tr[i].err},  {"reply", tr[i].reply},
              {"note", tr[i].note},  {"mtu_bytes", 0},
              {"mtu_state", ""}};
    if (df_of[i] != std::string::npos) {
      const DfResult& d = dr[df_of[i]];
      p["mtu_bytes"] = df[df_of[i]].bytes;
      p["mtu_state"] = d.state;
      p["mtu_note"] = d.note;
      p["path_mtu"] = d.path_mtu;
      if (!d.reply.empty()) p["mtu_reply"] = d.reply;
    }
    probes.push_back(std::move(p));
  }
  ctx.Result("probes", {{"probes", probes}, {"last", true}, {"total", tcp.size()}});
  return Status::Ok();
}

}  // namespace

Status RunNics(const Json& args, CommandContext& ctx) {
  std::vector<Endpoint> eps;
  double hold_s = 600;
  Status s = ListenAll(args, &eps, &hold_s);
  if (!s.ok()) return s;
  Json listeners = Json::array();
  for (const Endpoint& e : eps) {
    bool ok = e.error.empty();
    listeners.push_back({{"nic", e.nic},
                         {"addr", e.addr},
                         {"tcp_port", ok && !e.tcp->ports().empty() ? e.tcp->ports()[0] : 0},
                         {"udp_port", ok ? e.udp->port() : 0},
                         {"error", e.error}});
  }
  ctx.Result("listening", {{"listeners", listeners}});
  Deadline hold = Deadline::InSeconds(hold_s);
  // Endpoints close on every path out (destructors).
  for (;;) {
    std::optional<Json> c = ctx.NextControl(hold);
    if (!c) {
      if (hold.Passed()) {
        return Status::Timeout("nics: no stop within " + std::to_string(hold_s) +
                               " s; listeners closed");
      }
      return Status::Ok();
    }
    std::string cmd = c->value("cmd", "");
    if (cmd == "probe") {
      s = Probe(c->value("args", Json::object()), ctx);
      if (!s.ok()) return s;
    } else if (cmd == "stop") {
      long long accepted = 0, answered = 0;
      for (Endpoint& e : eps) {
        e.tcp->Stop();
        e.udp->Stop();
        accepted += e.tcp->accepted();
        answered += e.udp->answered();
      }
      ctx.Result("stopped", {{"accepted", accepted}, {"answered", answered}});
      return Status::Ok();
    } else {
      ctx.Log("warn", "nics: ignored control '" + cmd + "' (want probe or stop)");
    }
  }
}

}  // namespace cc::agent
