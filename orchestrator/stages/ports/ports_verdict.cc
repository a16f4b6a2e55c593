#include "orchestrator/stages/ports/ports_verdict.h"

#include <algorithm>
#include <set>

#include "common/hostlist.h"

namespace cc {

using Json = nlohmann::json;

std::string FormatTcpPorts(const std::vector<int>& ports) {
  if (ports.empty()) return "";
  std::string out = "tcp/";
  for (size_t i = 0; i < ports.size(); ++i) {
    out += (i ? "," : "") + std::to_string(ports[i]);
  }
  return out;
}

namespace {

constexpr size_t kMaxEvidencePairs = 64;

bool Tested(const PortCell& c) {
  return c.outcome == Outcome::kPass || c.outcome == Outcome::kWarn || c.outcome == Outcome::kFail;
}

std::string Fold(const std::vector<std::string>& nodes) { return FoldHostlist(nodes); }

// "filtered" or "filtered/refused", in a fixed order.
std::string StatesOf(const std::vector<const PortCell*>& cells) {
  std::set<std::string> s;
  for (const PortCell* c : cells) s.insert(c->state);
  std::string out;
  for (const char* k : {"filtered", "refused", "unreachable", "wrong-host", "in-use", "open"}) {
    if (s.count(k)) out += (out.empty() ? "" : "/") + std::string(k);
  }
  return out;
}

// "tcp/22,29500 and 8 ephemeral ports" for the ports of `cells`.
std::string DescribePorts(const std::vector<const PortCell*>& cells) {
  std::set<int> fixed, eph;
  for (const PortCell* c : cells) (c->kind == PortKind::kEphemeral ? eph : fixed).insert(c->port);
  std::string out = FormatTcpPorts({fixed.begin(), fixed.end()});
  if (!eph.empty()) {
    out += (out.empty() ? "" : " and ") + std::to_string(eph.size()) + " ephemeral port" +
           (eph.size() == 1 ? "" : "s");
  }
  return out;
}

std::vector<int> PortsOf(const std::vector<const PortCell*>& cells) {
  std::set<int> s;
  for (const PortCell* c : cells) s.insert(c->port);
  return {s.begin(), s.end()};
}

Json Evidence(const std::vector<const PortCell*>& cells) {
  Json pairs = Json::array();
  Json states = Json::object();
  for (const PortCell* c : cells) {
    if (pairs.size() < kMaxEvidencePairs) {
      pairs.push_back({{"src", c->src},
                       {"dst", c->dst},
                       {"port", c->port},
                       {"kind", PortKindName(c->kind)},
                       {"state", c->state}});
    }
    states[c->state] = states.value(c->state, 0) + 1;
  }
  return {
      {"pairs", pairs}, {"states", states}, {"probes", cells.size()}, {"ports", PortsOf(cells)}};
}

class Attribution {
 public:
  Attribution(const std::vector<std::string>& nodes, const std::vector<PortCell>& cells,
              const std::map<std::string, std::pair<int, int>>& ranges)
      : nodes_(nodes), ranges_(ranges) {
    for (size_t i = 0; i < nodes.size(); ++i) order_[nodes[i]] = i;
    for (const PortCell& c : cells) {
      if (Tested(c)) cells_.push_back(&c);
    }
    explained_.assign(cells_.size(), false);
  }

  std::vector<PortVerdict> Run() {
    if (Nothing()) return InUse(std::move(out_));
    Senders();
    WrongHosts();
    Receivers();
    Pairs();
    return InUse(std::move(out_));
  }

 private:
  bool Failed(size_t i) const { return cells_[i]->outcome == Outcome::kFail; }
  bool Open(size_t i) const { return !explained_[i] && Failed(i); }

  std::vector<const PortCell*> Pick(const std::vector<size_t>& idx) const {
    std::vector<const PortCell*> out;
    for (size_t i : idx) out.push_back(cells_[i]);
    return out;
  }
  void Explain(const std::vector<size_t>& idx) {
    for (size_t i : idx) explained_[i] = true;
  }
  std::vector<std::string> Sorted(std::set<std::string> names) const {
    std::vector<std::string> v(names.begin(), names.end());
    std::sort(v.begin(), v.end(),
              [&](const std::string& a, const std::string& b) { return Rank(a) < Rank(b); });
    return v;
  }
  size_t Rank(const std::string& n) const {
    auto it = order_.find(n);
    return it == order_.end() ? order_.size() : it->second;
  }

  PortVerdict Make(const std::string& kind, std::vector<std::string> nodes,
                   const std::vector<size_t>& idx) {
    PortVerdict v;
    v.kind = kind;
    v.nodes = std::move(nodes);
    auto cells = Pick(idx);
    v.ports = PortsOf(cells);
    std::set<std::pair<std::string, std::string>> pairs;
    for (const PortCell* c : cells) pairs.insert({c->src, c->dst});
    v.pairs.assign(pairs.begin(), pairs.end());
    v.evidence = Evidence(cells);
    return v;
  }

  // Every tested probe failed.
  bool Nothing() {
    if (cells_.empty()) return false;
    std::vector<size_t> all;
    for (size_t i = 0; i < cells_.size(); ++i) {
      if (!Failed(i)) return false;
      all.push_back(i);
    }
    PortVerdict v = Make("nothing", nodes_, all);
    v.message = "no node reaches any other on any port (" + std::to_string(all.size()) +
                " probes, " + StatesOf(Pick(all)) +
                "): the addresses in use are not on a network the nodes share, or every "
                "node's firewall blocks it";
    v.next_step =
        "check the node addresses (ip route get <peer>) and the firewalls "
        "(iptables -S; nft list ruleset) on " +
        Fold(nodes_);
    Explain(all);
    out_.push_back(std::move(v));
    return true;
  }

  // A sender whose every probe to two or more peers failed, while others
  // get through to those peers.
  void Senders() {
    for (const std::string& s : nodes_) {
      std::vector<size_t> mine;
      std::set<std::string> peers;
      bool all_fail = true;
      for (size_t i = 0; i < cells_.size(); ++i) {
        if (cells_[i]->src != s) continue;
        mine.push_back(i);
        peers.insert(cells_[i]->dst);
        all_fail = all_fail && Failed(i);
      }
      if (!all_fail || peers.size() < 2) continue;
      bool others_work = false;
      for (size_t i = 0; i < cells_.size() && !others_work; ++i) {
        others_work = cells_[i]->src != s && peers.count(cells_[i]->dst) && !Failed(i);
      }
      if (!others_work) continue;
      PortVerdict v = Make("sender", {s}, mine);
      v.message = s + " reaches no peer on any port (" + StatesOf(Pick(mine)) + " to " +
                  Fold(Sorted(peers)) + "): OUTPUT firewall or routing on " + s;
      v.next_step = "look at OUTPUT and the routes on " + s +
                    " (iptables -S OUTPUT; ip route get <peer address>)";
      Explain(mine);
      sender_verdict_[s] = out_.size();
      out_.push_back(std::move(v));
    }
  }

  void WrongHosts() {
    std::map<std::string, std::vector<size_t>> by_dst;
    for (size_t i = 0; i < cells_.size(); ++i) {
      if (Open(i) && cells_[i]->state == "wrong-host") by_dst[cells_[i]->dst].push_back(i);
    }
    for (const auto& [dst, idx] : by_dst) {
      PortVerdict v = Make("wrong-host", {dst}, idx);
      v.message = "connections to " + dst + " (" + DescribePorts(Pick(idx)) +
                  ") are answered by another node's listener: " + dst +
                  "'s address leads elsewhere (a duplicate address or NAT)";
      v.next_step = "check which host owns " + dst + "'s address (arping, ip neigh)";
      Explain(idx);
      out_.push_back(std::move(v));
    }
  }

  struct Blocked {
    std::vector<size_t> idx;   // the failing cells
    std::set<int> fixed, eph;  // blocked ports by kind
    bool everything = false;   // every tested port to it fails
  };

  // Per receiver, the ports every peer (two or more) fails to reach.
  std::map<std::string, Blocked> FindBlocked() {
    std::map<std::string, Blocked> out;
    for (const std::string& r : nodes_) {
      std::map<int, std::vector<size_t>> by_port;
      for (size_t i = 0; i < cells_.size(); ++i) {
        if (cells_[i]->dst == r && !explained_[i]) by_port[cells_[i]->port].push_back(i);
      }
      Blocked b;
      size_t tested_ports = 0;
      for (const auto& [port, idx] : by_port) {
        ++tested_ports;
        std::set<std::string> senders;
        bool all_fail = true;
        for (size_t i : idx) {
          senders.insert(cells_[i]->src);
          all_fail = all_fail && Failed(i);
        }
        if (!all_fail || senders.size() < 2) continue;
        b.idx.insert(b.idx.end(), idx.begin(), idx.end());
        (cells_[idx[0]]->kind == PortKind::kEphemeral ? b.eph : b.fixed).insert(port);
      }
      if (b.idx.empty()) continue;
      // One port alone is "drops tcp/P", not "accepts nothing".
      b.everything = tested_ports >= 2 && b.fixed.size() + b.eph.size() == tested_ports;
      out[r] = std::move(b);
    }
    return out;
  }

  void Receivers() {
    std::map<std::string, Blocked> blocked = FindBlocked();
    Everywhere(blocked);
    // Fold receivers alike in (ports, states) into one verdict.
    std::map<std::pair<std::vector<int>, std::string>, std::vector<std::string>> fold;
    std::map<std::string, std::vector<size_t>> fixed_idx, eph_idx;
    for (auto& [r, b] : blocked) {
      for (size_t i : b.idx) {
        (cells_[i]->kind == PortKind::kEphemeral ? eph_idx : fixed_idx)[r].push_back(i);
      }
      if (b.everything && (!b.fixed.empty() || !b.eph.empty())) {
        Nowhere(r, b);
        continue;
      }
      if (!b.fixed.empty()) {
        std::vector<int> ports(b.fixed.begin(), b.fixed.end());
        fold[{ports, StatesOf(Pick(fixed_idx[r]))}].push_back(r);
      }
    }
    for (auto& [key, rs] : fold) {
      std::vector<size_t> idx;
      for (const std::string& r : rs)
        idx.insert(idx.end(), fixed_idx[r].begin(), fixed_idx[r].end());
      ReceiverVerdict(Sorted({rs.begin(), rs.end()}), key.first, key.second, idx);
    }
    Ephemeral(blocked, eph_idx);
  }

  // A listed or ssh port blocked on every receiver that was tested.
  void Everywhere(std::map<std::string, Blocked>& blocked) {
    std::map<int, std::set<std::string>> receivers_of;
    for (const PortCell* c : cells_) {
      if (c->kind != PortKind::kEphemeral) receivers_of[c->port].insert(c->dst);
    }
    for (const auto& [port, rs] : receivers_of) {
      if (rs.size() < 2) continue;
      bool all = true;
      for (const std::string& r : rs) all = all && blocked.count(r) && blocked[r].fixed.count(port);
      if (!all) continue;
      std::vector<size_t> idx;
      for (size_t i = 0; i < cells_.size(); ++i) {
        if (cells_[i]->port == port && cells_[i]->kind != PortKind::kEphemeral) idx.push_back(i);
      }
      PortVerdict v = Make("port-everywhere", Sorted(rs), idx);
      v.message = FormatTcpPorts({port}) + " is blocked on every node (" + StatesOf(Pick(idx)) +
                  " from every peer): a cluster-wide firewall policy; a job that uses it "
                  "cannot start";
      v.next_step = "allow tcp " + std::to_string(port) + " between " + Fold(Sorted(rs));
      Explain(idx);
      out_.push_back(std::move(v));
      for (const std::string& r : rs) {
        Blocked& b = blocked[r];
        b.fixed.erase(port);
        b.everything = false;
        std::vector<size_t> keep;
        for (size_t i : b.idx) {
          if (!explained_[i]) keep.push_back(i);
        }
        b.idx = keep;
      }
    }
  }

  // Every port to r fails from every peer.
  void Nowhere(const std::string& r, const Blocked& b) {
    auto sv = sender_verdict_.find(r);
    if (sv != sender_verdict_.end()) {
      PortVerdict& v = out_[sv->second];
      v.kind = "isolated";
      v.message = r +
                  " neither reaches nor is reached by any peer on any port: its firewall "
                  "(INPUT and OUTPUT), its link or its address";
      v.next_step = "look at " + r + "'s link, address and firewall (ip addr; iptables -S)";
      for (size_t i : b.idx) v.pairs.push_back({cells_[i]->src, r});
      Explain(b.idx);
      return;
    }
    PortVerdict v = Make("receiver", {r}, b.idx);
    v.message = r + " accepts no port from any peer (" + StatesOf(Pick(b.idx)) +
                "): INPUT firewall or routing on " + r + ", or its address is wrong";
    v.next_step = "look at INPUT on " + r +
                  " (iptables -S INPUT; nft list ruleset) and at its "
                  "address";
    Explain(b.idx);
    out_.push_back(std::move(v));
  }

  void ReceiverVerdict(const std::vector<std::string>& rs, const std::vector<int>& ports,
                       const std::string& states, const std::vector<size_t>& idx) {
    std::string who = Fold(rs);
    bool one = rs.size() == 1;
    std::string tcp = FormatTcpPorts(ports);
    PortVerdict v = Make("receiver", rs, idx);
    if (states == "filtered") {
      v.message =
          who + (one ? " drops " : " drop ") + tcp + " from every peer: INPUT firewall on " + who;
    } else if (states == "refused") {
      v.message = who + (one ? " refuses " : " refuse ") + tcp +
                  " from every peer with our listener up (a REJECT rule): INPUT firewall on " + who;
    } else if (states == "unreachable") {
      v.message = who + (one ? " answers " : " answer ") + tcp +
                  " from every peer with ICMP unreachable: a REJECT rule or routing on " + who;
    } else {
      v.message = who + (one ? " blocks " : " block ") + tcp + " from every peer (" + states +
                  "): INPUT firewall on " + who;
    }
    std::string list;
    for (int p : ports) list += (list.empty() ? "" : ",") + std::to_string(p);
    v.next_step =
        "allow tcp " + list + " in INPUT on " + who + " (iptables -S INPUT; nft list ruleset)";
    Explain(idx);
    out_.push_back(std::move(v));
  }

  // Ports other than the ephemeral ones that peers reach on r.
  std::vector<int> WorkingFixedPorts(const std::string& r) const {
    std::set<int> ok;
    for (const PortCell* c : cells_) {
      if (c->dst == r && c->kind != PortKind::kEphemeral && c->outcome != Outcome::kFail) {
        ok.insert(c->port);
      }
    }
    return {ok.begin(), ok.end()};
  }

  void Ephemeral(const std::map<std::string, Blocked>& blocked,
                 std::map<std::string, std::vector<size_t>>& eph_idx) {
    // Fold receivers with the same range, sample size blocked and working ports.
    struct Key {
      std::pair<int, int> range;
      size_t blocked, sampled;
      std::vector<int> working;
      bool operator<(const Key& o) const {
        return std::tie(range, blocked, sampled, working) <
               std::tie(o.range, o.blocked, o.sampled, o.working);
      }
    };
    std::map<Key, std::vector<std::string>> fold;
    for (const auto& [r, b] : blocked) {
      if (b.eph.empty() || eph_idx[r].empty() || explained_[eph_idx[r].front()]) continue;
      if (sender_verdict_.count(r)) {
        OneRuleBothWays(r, eph_idx[r]);
        continue;
      }
      std::set<int> sampled;
      for (const PortCell* c : cells_) {
        if (c->dst == r && c->kind == PortKind::kEphemeral) sampled.insert(c->port);
      }
      auto range = ranges_.count(r) ? ranges_.at(r) : std::make_pair(0, 0);
      fold[{range, b.eph.size(), sampled.size(), WorkingFixedPorts(r)}].push_back(r);
    }
    for (const auto& [key, rs_unsorted] : fold) {
      std::vector<std::string> rs = Sorted({rs_unsorted.begin(), rs_unsorted.end()});
      std::vector<size_t> idx;
      for (const std::string& r : rs) idx.insert(idx.end(), eph_idx[r].begin(), eph_idx[r].end());
      std::string who = Fold(rs);
      bool one = rs.size() == 1;
      std::string range =
          key.range.first ? std::to_string(key.range.first) + "-" + std::to_string(key.range.second)
                          : "the ephemeral range";
      std::string allowed;
      for (size_t i = 0; i < key.working.size(); ++i) {
        allowed += (i == 0                        ? ""
                    : i + 1 == key.working.size() ? " and "
                                                  : ", ") +
                   std::to_string(key.working[i]);
      }
      PortVerdict v = Make("ephemeral", rs, idx);
      bool all = key.blocked == key.sampled;
      v.message =
          who + (one ? " drops " : " drop ") +
          (all ? std::string(one ? "its" : "their") + " ephemeral ports"
               : std::to_string(key.blocked) + " of " + std::to_string(key.sampled) +
                     " sampled ephemeral ports") +
          " (" + StatesOf(Pick(idx)) + ", range " + range + ") from every peer" +
          (allowed.empty() ? "" : " while tcp/" + allowed + " get through") +
          ". NCCL opens its data sockets on ephemeral ports (net.ipv4.ip_local_port_range " +
          range + "); a firewall that allows only " +
          (allowed.empty() ? std::string("the rendezvous port") : allowed) +
          " lets the rendezvous succeed and breaks NCCL right after: open tcp " + range + " on " +
          who;
      v.next_step = "open tcp " + range + " on " + who +
                    " (or narrow net.ipv4.ip_local_port_range on every node and open that range)";
      v.evidence["ephemeral_range"] = {key.range.first, key.range.second};
      Explain(idx);
      out_.push_back(std::move(v));
    }
  }

  std::string RangeOf(const std::string& r) const {
    auto it = ranges_.find(r);
    return it == ranges_.end()
               ? "the ephemeral range"
               : std::to_string(it->second.first) + "-" + std::to_string(it->second.second);
  }

  // One cause, one verdict: r's INPUT drops its ephemeral range. Peers
  // cannot reach r's ephemeral ports, and the replies to r's own outgoing
  // connections (they come back to r's ephemeral source ports) are dropped
  // too, so r also "reaches no peer". The sender verdict already made for
  // r becomes this one verdict, listing both symptoms.
  void OneRuleBothWays(const std::string& r, const std::vector<size_t>& eph) {
    std::vector<size_t> out_idx;
    std::set<std::string> peers;
    for (size_t i = 0; i < cells_.size(); ++i) {
      if (cells_[i]->src == r) {
        out_idx.push_back(i);
        peers.insert(cells_[i]->dst);
      }
    }
    std::vector<size_t> all = eph;
    all.insert(all.end(), out_idx.begin(), out_idx.end());
    std::string range = RangeOf(r);
    std::string peer_list = Fold(Sorted(peers));
    PortVerdict v = Make("ephemeral", {r}, all);
    v.message = r + "'s INPUT drops tcp " + range +
                ", its ephemeral range (net.ipv4.ip_local_port_range), and that one rule "
                "explains two symptoms: its sampled ephemeral ports are " +
                StatesOf(Pick(eph)) + " from every peer (NCCL's data sockets listen there), and " +
                r + " reaches no peer on any port (" + StatesOf(Pick(out_idx)) + " to " +
                peer_list +
                ") because the replies to its own connections come back to its "
                "ephemeral ports and are dropped as well";
    v.next_step = "on " + r +
                  ", accept replies before the rule (iptables -I INPUT -m conntrack "
                  "--ctstate ESTABLISHED,RELATED -j ACCEPT) and open tcp " +
                  range + " in the INPUT chain (iptables -S INPUT; nft list ruleset)";
    v.evidence["rule"] = {{"node", r}, {"chain", "INPUT"}, {"ports", range}};
    v.evidence["symptoms"] = {
        {{"symptom", "peers cannot reach " + r + "'s ephemeral ports"},
         {"probes", eph.size()},
         {"states", StatesOf(Pick(eph))}},
        {{"symptom", r + " reaches no peer on any port (replies to it dropped)"},
         {"probes", out_idx.size()},
         {"states", StatesOf(Pick(out_idx))},
         {"peers", peer_list}}};
    if (ranges_.count(r)) {
      v.evidence["ephemeral_range"] = {ranges_.at(r).first, ranges_.at(r).second};
    }
    Explain(all);
    out_[sender_verdict_.at(r)] = std::move(v);
  }

  void Pairs() {
    // Failing cells per ordered pair; passing counts per ordered pair.
    std::map<std::pair<std::string, std::string>, std::vector<size_t>> fails;
    std::map<std::pair<std::string, std::string>, int> works;
    for (size_t i = 0; i < cells_.size(); ++i) {
      auto key = std::make_pair(cells_[i]->src, cells_[i]->dst);
      if (Open(i)) fails[key].push_back(i);
      if (!Failed(i)) ++works[key];
    }
    std::set<std::pair<std::string, std::string>> done;
    // One-way failures folded by sender and what fails.
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> one_way;
    std::map<std::pair<std::string, std::string>, std::vector<size_t>> one_way_idx;
    for (const auto& [key, idx] : fails) {
      const auto& [a, b] = key;
      if (done.count({b, a})) continue;
      done.insert(key);
      auto back = fails.find({b, a});
      if (back != fails.end()) {
        std::vector<size_t> all = idx;
        all.insert(all.end(), back->second.begin(), back->second.end());
        PairVerdict(a, b, all, true);
      } else if (works.count({b, a})) {
        auto fk = std::make_pair(a, DescribePorts(Pick(idx)) + " " + StatesOf(Pick(idx)));
        one_way[fk].push_back(b);
        auto& v = one_way_idx[fk];
        v.insert(v.end(), idx.begin(), idx.end());
      } else {
        PairVerdict(a, b, idx, false);
      }
    }
    for (const auto& [fk, dsts_unsorted] : one_way) {
      std::vector<std::string> dsts = Sorted({dsts_unsorted.begin(), dsts_unsorted.end()});
      const std::string& a = fk.first;
      const std::vector<size_t>& idx = one_way_idx[fk];
      std::string bs = Fold(dsts);
      std::vector<std::string> named = {a};
      named.insert(named.end(), dsts.begin(), dsts.end());
      PortVerdict v = Make("one-way", named, idx);
      v.message = a + " → " + bs + " fails but " + bs + " → " + a + " works: " + a +
                  "'s OUTPUT or " + bs + "'s INPUT filters that direction (" +
                  DescribePorts(Pick(idx)) + ", " + StatesOf(Pick(idx)) + ")";
      v.next_step = "look at OUTPUT on " + a + " and INPUT on " + bs + " (iptables -S)";
      Explain(idx);
      out_.push_back(std::move(v));
    }
  }

  void PairVerdict(const std::string& a, const std::string& b, const std::vector<size_t>& idx,
                   bool both) {
    std::vector<std::string> named = Sorted({a, b});
    PortVerdict v = Make("pair", named, idx);
    std::string head = both ? named[0] + " ↔ " + named[1] + " fail both ways"
                            : a + " → " + b + " fails (the other way was not tested)";
    v.message = head + " on " + DescribePorts(Pick(idx)) + " (" + StatesOf(Pick(idx)) +
                ") while both work with others: a firewall rule or route between " + named[0] +
                " and " + named[1];
    v.next_step = "look at the rules that name " + named[0] + " or " + named[1] +
                  " (iptables -S on both) and the route between them";
    Explain(idx);
    out_.push_back(std::move(v));
  }

  // Ports held by another process (warn), one verdict per port.
  std::vector<PortVerdict> InUse(std::vector<PortVerdict> out) {
    std::map<int, std::vector<size_t>> by_port;
    for (size_t i = 0; i < cells_.size(); ++i) {
      if (cells_[i]->state == "in-use") by_port[cells_[i]->port].push_back(i);
    }
    for (const auto& [port, idx] : by_port) {
      std::set<std::string> dsts;
      for (size_t i : idx) dsts.insert(cells_[i]->dst);
      std::vector<std::string> rs = Sorted(dsts);
      std::string who = Fold(rs);
      PortVerdict v = Make("in-use", rs, idx);
      v.severity = Outcome::kWarn;
      v.message = FormatTcpPorts({port}) + " on " + who +
                  " is held by another process: peers reach that process, not ours; a job "
                  "that listens on it there (MASTER_PORT when " +
                  who + " hosts rank 0) fails with 'address already in use'";
      v.next_step = "find the holder with ss -ltnp 'sport = :" + std::to_string(port) + "' on " +
                    who + ", or choose another port";
      out.push_back(std::move(v));
    }
    return out;
  }

  const std::vector<std::string>& nodes_;
  const std::map<std::string, std::pair<int, int>>& ranges_;
  std::map<std::string, size_t> order_;
  std::vector<const PortCell*> cells_;
  std::vector<bool> explained_;
  std::map<std::string, size_t> sender_verdict_;  // node -> index in out_
  std::vector<PortVerdict> out_;
};

}  // namespace

std::vector<PortVerdict> AttributePorts(
    const std::vector<std::string>& nodes, const std::vector<PortCell>& cells,
    const std::map<std::string, std::pair<int, int>>& ephemeral_ranges) {
  return Attribution(nodes, cells, ephemeral_ranges).Run();
}

}  // namespace cc
