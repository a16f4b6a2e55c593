// The nics stage's stored results, pure: agent probe answers -> NicProbe,
// and a selection (nic_select.h) -> the pair results per probe and the
// node results (each node's verdict on the chosen network, excluded
// subnets with their reason, the recommendation with its env lines).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/stages/nics/nic_select.h"
#include "orchestrator/store/store.h"

namespace cc {

// One entry of an agent's "probes" answer (agent/nics_command.cc) sent by
// `src`. `node_of_token` maps every node's token to the node, so that an
// answer from the wrong node (the sender itself, behind a shared address)
// is named.
NicProbe ProbeFromAgent(const std::string& src, const nlohmann::json& answer,
                        const std::map<std::string, std::string>& node_of_token);

// Per probe "tcp:<subnet>" and, where tried, "mtu:<subnet>". On the chosen
// subnet a failure fails; on an excluded one every result is skip with the
// exclusion; elsewhere a failure warns (the network is not used). An MTU
// result of a pair TCP did not connect is skip (the tcp result says why);
// so is every result of a node with a duplicate address (nic_problems.h).
std::vector<PairResult> NicsPairResults(const std::vector<NicProbe>& probes,
                                        const NicSelection& selection);

// Per node "selected" (its interface on the chosen network, or why it is
// bad there, with the fixes in evidence["next_step"]) and "ib" where its IB ports differ; per
// excluded subnet a node "*" "excluded:<cidr>" skip with the reason; node "*" "recommendation"
// (pass with the env lines, fail when nothing works).
std::vector<NodeResult> NicsNodeResults(const std::vector<std::string>& nodes,
                                        const NicSelection& selection);

// The node-level causes among the chosen network's failing problems
// (verdict.h CauseScope), for StageContext::RecordCause: an address
// missing ("address-missing"), with the wrong prefix ("wrong-prefix") or
// in a subnet of its own ("wrong-subnet"), shared by a few nodes
// ("duplicate-address", one cause naming all of them), an interface down
// ("link-down"), an MTU off the network's ("mtu"). Check "selected", the
// problem's message as summary, its fix as next step. A node no peer
// reaches ("unreachable") is no cause here: nics cannot tell a firewall
// from a cable, and the ports stage, which can, names it.
std::vector<Verdict> NicsCauses(const NicSelection& selection);

}  // namespace cc
