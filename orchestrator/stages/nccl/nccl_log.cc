#include "orchestrator/stages/nccl/nccl_log.h"

#include <algorithm>
#include <map>
#include <regex>

namespace cc {
namespace {

// Every pattern below mirrors a format string in NCCL's source (NVIDIA/nccl):
//
//   src/transport/net.cc
//     "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s"
//     "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d(%d)%s%s%s"
//         (PXN: the proxy rank in brackets), suffixes "/GDRDMA", "(PCI)",
//         "/Shared"; "[receive]" lines have the same shape.
//   src/transport/p2p.cc
//     "Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/%s%s%s" (CUMEM|MNNVL,
//         "/read", "/CE"), "... via P2P/IPC%s%s", "... via P2P/direct
//         pointer%s"
//   src/transport/shm.cc
//     "Channel %02d : %d[%d] -> %d[%d] via SHM/%s/%s" (no connection index)
//   src/transport/coll_net.cc
//     "CollNet %02d/%1d : %d [send] via COLLNET/%s/%d%s%s"
//   src/graph/topo.cc
//     "NET/%s : GPU Direct RDMA %s for HCA %d '%s'"
//   src/transport/net_ib (init): "NET/IB : Using%s %s; OOB %s:%s" with
//     " [%d]%s:%d/%s" per device (IB or RoCE)
//   src/transport/net_socket.cc: "NET/Socket : Using [0]lo:127.0.0.1<0>"
//   src/init.cc: "Using network %s", "NCCL version %s"
//
// Older NCCL printed the bus id in the brackets ("0[3d000]") and "Ring"
// for "Channel"; both are accepted.
const std::regex& ChannelRe() {
  static const std::regex re(
      R"(^(?:Channel|Ring) (\d+)(?:/(\d+))? : (\d+)\[[^\]]*\] -> (\d+)\[[^\]]*\](?: \[(send|receive)\])? via (.+)$)");
  return re;
}
const std::regex& CollNetRe() {
  static const std::regex re(
      R"(^(?:CollNet|Coll) (\d+)(?:/(\d+))? : (\d+)(?: \[(send|receive)\])? via (.+)$)");
  return re;
}
// "IB/0(3)/GDRDMA(PCI)/Shared" -> net, dev, proxy, rest.
const std::regex& NetTailRe() {
  static const std::regex re(R"(^([^/]+)/(\d+)(?:\((\d+)\))?(.*)$)");
  return re;
}
const std::regex& NetUsingRe() {
  static const std::regex re(R"(^NET/([^:]+?) ?: Using(.*)$)");
  return re;
}
const std::regex& NetDeviceRe() {
  static const std::regex re(R"(\[(\d+)\]([^\s:\[\]]+):(\S+))");
  return re;
}
const std::regex& GdrRe() {
  static const std::regex re(
      R"(^NET/([^:]+?) ?: GPU Direct RDMA (Enabled|Disabled) for HCA (\d+) '([^']*)')");
  return re;
}
const std::regex& NRanksNNodesRe() {
  static const std::regex re(R"(\bnRanks (\d+) nNodes (\d+))");
  return re;
}
const std::regex& NRanksRe() {
  static const std::regex re(R"(\bnranks (\d+)\b)");
  return re;
}

int ToInt(const std::ssub_match& m, int fallback) {
  if (!m.matched) return fallback;
  try {
    return std::stoi(m.str());
  } catch (...) {
    return fallback;
  }
}

void FillTail(const std::string& tail, ChannelPath* p) {
  size_t slash = tail.find('/');
  p->transport = tail.substr(0, slash);
  std::string rest = slash == std::string::npos ? "" : tail.substr(slash + 1);
  if (p->transport == "NET" || p->transport == "COLLNET") {
    std::smatch m;
    if (std::regex_match(rest, m, NetTailRe())) {
      p->net = m[1].str();
      p->dev = ToInt(m[2], -1);
      p->proxy_rank = ToInt(m[3], -1);
      rest = m[4].str();
      if (!rest.empty() && rest[0] == '/') rest.erase(0, 1);
    }
    p->gdrdma = rest.find("GDRDMA") != std::string::npos;
  }
  p->detail = rest;
}

std::string Trim(std::string s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string_view NcclMessage(std::string_view line) {
  for (std::string_view tag : {"NCCL INFO ", "NCCL WARN "}) {
    size_t at = line.find(tag);
    if (at != std::string_view::npos) return line.substr(at + tag.size());
  }
  return line;
}

std::optional<ChannelPath> ParseNcclTransportLine(std::string_view line) {
  std::string raw = Trim(std::string(line));
  std::string msg(NcclMessage(raw));
  if (msg.find(" via ") == std::string::npos) return std::nullopt;
  ChannelPath p;
  p.line = raw;
  std::smatch m;
  if (std::regex_match(msg, m, ChannelRe())) {
    p.channel = ToInt(m[1], -1);
    p.connection = ToInt(m[2], 0);
    p.from_rank = ToInt(m[3], -1);
    p.to_rank = ToInt(m[4], -1);
    p.direction = m[5].str();
    FillTail(m[6].str(), &p);
  } else if (std::regex_match(msg, m, CollNetRe())) {
    p.channel = ToInt(m[1], -1);
    p.connection = ToInt(m[2], 0);
    p.from_rank = ToInt(m[3], -1);
    p.direction = m[4].str();
    FillTail(m[5].str(), &p);
  } else {
    return std::nullopt;
  }
  if (p.transport.empty()) return std::nullopt;
  return p;
}

NcclLogSummary ParseNcclLog(std::string_view text) {
  NcclLogSummary s;
  std::string assigned, assigned_line;
  std::map<std::string, std::vector<NetDevice>> devices_by_net;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string line = Trim(std::string(text.substr(pos, nl - pos)));
    pos = nl + 1;
    if (line.empty()) continue;
    ++s.lines;
    size_t warn = line.find("NCCL WARN ");
    if (warn != std::string::npos) {
      s.warnings.push_back(line.substr(warn + 10));
      continue;
    }
    std::string msg(NcclMessage(line));
    std::smatch m;
    if (msg.rfind("NCCL version ", 0) == 0) {
      std::string v = msg.substr(13);
      s.version = v.substr(0, v.find(' '));
    } else if (msg.rfind("Using network ", 0) == 0) {
      s.network = Trim(msg.substr(14));
      s.network_line = line;
    } else if (msg.rfind("Assigned NET plugin ", 0) == 0) {
      std::string rest = msg.substr(20);
      assigned = rest.substr(0, rest.find(" to comm"));
      assigned_line = line;
    } else if (std::regex_match(msg, m, NetUsingRe())) {
      std::string net = m[1].str();
      std::string list = m[2].str();
      std::vector<NetDevice> devs;
      for (std::sregex_iterator it(list.begin(), list.end(), NetDeviceRe()), end; it != end; ++it) {
        devs.push_back({std::stoi((*it)[1].str()), (*it)[2].str(), (*it)[3].str()});
      }
      if (!devs.empty()) devices_by_net[net] = std::move(devs);
    } else if (std::regex_search(msg, m, GdrRe())) {
      s.gdr.push_back({m[1].str(), ToInt(m[3], -1), m[4].str(), m[2].str() == "Enabled", line});
    } else if (auto p = ParseNcclTransportLine(line)) {
      s.paths.push_back(std::move(*p));
    } else if (std::regex_search(msg, m, NRanksNNodesRe())) {
      s.nranks = std::max(s.nranks, ToInt(m[1], 0));
      s.nnodes = std::max(s.nnodes, ToInt(m[2], 0));
    } else if (std::regex_search(msg, m, NRanksRe())) {
      s.nranks = std::max(s.nranks, ToInt(m[1], 0));
    }
  }
  // The strongest statement wins: "Using network X" (init.cc), then the
  // plugin assigned to the comm, then what the NET paths themselves say.
  if (s.network.empty() && !assigned.empty()) {
    s.network = assigned;
    s.network_line = assigned_line;
  }
  if (s.network.empty()) {
    for (const auto& p : s.paths) {
      if (p.transport == "NET" && !p.net.empty()) {
        s.network = p.net;
        s.network_line = p.line;
        break;
      }
    }
  }
  for (const auto& [net, devs] : devices_by_net) s.nets_with_devices.push_back(net);
  auto it = devices_by_net.find(s.network);
  if (it != devices_by_net.end()) {
    s.devices = it->second;
    for (const auto& d : s.devices) s.interfaces.push_back(d.name);
  }
  return s;
}

}  // namespace cc
