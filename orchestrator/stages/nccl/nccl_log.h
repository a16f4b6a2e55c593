// Parser for NCCL's own log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET):
// which network plugin a communicator really used, over which interfaces,
// and the transport of every channel connection ("via NET/IB/0/GDRDMA",
// "via NET/Socket/0", "via P2P/CUMEM/read", "via SHM/direct/direct").
//
// The line shapes come from NCCL's format strings, cited where they are
// matched (nccl_log.cc). Pure: text in, struct out; no I/O.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cc {

// One "Channel ..." (or "CollNet ...") connection line.
struct ChannelPath {
  int channel = -1;
  int connection = 0;  // the "/N" after the channel number; 0 if absent
  int from_rank = -1;
  int to_rank = -1;       // -1 for CollNet lines (one rank only)
  std::string direction;  // "send" | "receive" | "" (P2P and SHM print none)
  std::string transport;  // "NET" | "P2P" | "SHM" | "COLLNET"
  std::string net;        // NET/COLLNET: plugin name ("IB", "Socket"); else ""
  int dev = -1;           // NET/COLLNET device index; -1 otherwise
  int proxy_rank = -1;    // NET via PXN: "NET/IB/0(3)" -> 3; else -1
  bool gdrdma = false;    // "/GDRDMA" present
  std::string detail;     // the rest: "CUMEM/read", "IPC/CE", "direct/direct",
                          // "GDRDMA(PCI)/Shared", ...
  std::string line;       // the raw log line, for quoting as evidence
};

// One device in a "NET/<plugin> : Using [0]lo:127.0.0.1<0> [1]..." line.
struct NetDevice {
  int index = -1;
  std::string name;  // "lo", "eth0", "mlx5_0"
  std::string rest;  // "127.0.0.1<0>" (Socket) or "1/IB", "1/RoCE" (IB)
};

// "NET/IB : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'".
struct GdrSupport {
  std::string net;  // "IB", "Socket"
  int hca = -1;
  std::string name;
  bool enabled = false;
  std::string line;
};

// What one NCCL log (one process, one or more communicators) says.
struct NcclLogSummary {
  std::string version;  // "2.28.9+cuda13.0"; "" if not logged
  // The network the communicator used: "IB", "Socket", or a plugin's name;
  // "" when the log does not say. network_line is the line that said it.
  std::string network;
  std::string network_line;
  // Devices listed by the chosen network's "NET/<net> : Using" line, and
  // their names (interfaces for Socket, HCAs for IB).
  std::vector<NetDevice> devices;
  std::vector<std::string> interfaces;
  // Plugins that listed at least one device ("NET/IB : Using [0]mlx5_0...");
  // lets a judge see IB hardware even when the comm fell back to Socket.
  std::vector<std::string> nets_with_devices;
  int nranks = 0;  // from "nRanks N" / "nranks N"; largest seen
  int nnodes = 0;  // from "nNodes N"; largest seen
  std::vector<ChannelPath> paths;
  std::vector<GdrSupport> gdr;
  std::vector<std::string> warnings;  // text after "NCCL WARN "
  size_t lines = 0;                   // lines read
};

// The message part of a NCCL log line: the text after "NCCL INFO " or
// "NCCL WARN " ("vm:720:720 [0] NCCL INFO Using network Socket" ->
// "Using network Socket"). The whole line if it has no such prefix.
std::string_view NcclMessage(std::string_view line);

// Parses one "Channel"/"CollNet" connection line; nullopt for any other
// line (ring lines "Channel 00/02 : 0 1" included).
std::optional<ChannelPath> ParseNcclTransportLine(std::string_view line);

// Parses a whole log (several logs concatenated are fine). Never fails:
// what the text does not say stays empty.
NcclLogSummary ParseNcclLog(std::string_view text);

}  // namespace cc
