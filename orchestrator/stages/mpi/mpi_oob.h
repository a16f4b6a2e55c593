// Which network Open MPI's out-of-band channel (oob_tcp_if_include) uses.
// OOB is how every node's daemon reports back to mpirun, and mpirun runs
// here, on the controller. The controller may be a login node that is not
// on the data network at all, so the data network (btl_tcp_if_include, the
// nics stage's choice) is not a safe answer: the OOB network must be one
// this machine shares with every node. The network the controller's own
// ssh reaches the nodes by (their inventory addresses) is the one known to
// work, so it comes first. Pure: interfaces and addresses in, a choice out.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cc {

// One IPv4 address of an interface of this machine.
struct LocalInterface {
  std::string name;     // "eth0", "br-mgmt"
  std::string address;  // "10.43.0.254"
  int prefix_len = 0;   // 24
};

struct OobChoice {
  std::string value;   // for --mca oob_tcp_if_include; "" = Open MPI chooses
  std::string source;  // "setting", "inventory-addresses", "data-addresses", "none"
  std::string why;     // one sentence for people
  nlohmann::json ToJson() const;
};

struct OobInputs {
  std::string setting;                     // [stages.mpi] oob_tcp_if_include ("" = unset)
  std::vector<LocalInterface> interfaces;  // this machine's, loopback included
  // node -> IPv4 address the controller's ssh uses ("" when it is not an
  // IPv4 literal and did not resolve to one).
  std::map<std::string, std::string> inventory_addresses;
  // node -> its address on the data network (nics stage), may be empty.
  std::map<std::string, std::string> data_addresses;
};

// The operator's setting wins. Otherwise the first non-loopback interface
// whose subnet holds every node's inventory address, as its CIDR (the
// interface names on the nodes differ from this machine's, a CIDR means
// the same everywhere); else one whose subnet holds every data address;
// else "" with why (routed networks: Open MPI tries every interface).
OobChoice ChooseOobNetwork(const OobInputs& in);

// "10.43.0.0/24" for 10.43.0.7 with prefix 24; "" when `address` is not
// IPv4 or prefix_len is outside 0..32.
std::string Ipv4Network(const std::string& address, int prefix_len);

// Whether IPv4 `address` lies in the network of `iface`.
bool InSubnet(const std::string& address, const LocalInterface& iface);

}  // namespace cc
