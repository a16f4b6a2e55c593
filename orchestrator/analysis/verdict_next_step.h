// The next step follows the cause: a verdict's next step is derived from
// the evidence of the results that made it, not from the stage it was
// seen in ("check the cable" is wrong advice for an MTU mismatch).
//
// From a result's evidence, first match wins:
//   {"next_step": "..."}                      the stage's own advice, as is
//   {"problems": [...]}                       (the nics stage) each problem's
//       own next_step, else from its kind: "mtu" -> set the subnet's MTU
//       on that interface; "down" -> bring it up; "missing" -> give the
//       node an address on the subnet; "speed", "unreachable"; joined "; "
//   {"interface"|"nic", "expected_mtu"}       set MTU X on interface Y of Z
//   {"port"|"ports"|"port_range", "chain"}    open the port on that chain
//   {"field"|"component", "majority"|"expected"}  install the version the
//       rest of the cluster has
// "" when the evidence names no cause; the caller falls back to its rule.
//
// Pure: no I/O; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cc {

// `node`: who the advice is for (a name or a folded range). `subnet_mtu`:
// the MTU most nodes of a subnet have ({"10.42.0.0/24": 9000}), for nics
// problems that do not carry their expected MTU.
std::string NextStepFromEvidence(const nlohmann::json& evidence, const std::string& node,
                                 const nlohmann::json& subnet_mtu = nlohmann::json::object());

// {"<cidr>": mtu} from the nics stage's selection (its "subnets" list);
// empty when there is none.
nlohmann::json SubnetMtus(const nlohmann::json& nics_selection);

// The distinct non-empty steps, in order, joined with "; "; at most
// `max_steps`, then "(and N more)".
std::string JoinSteps(const std::vector<std::string>& steps, size_t max_steps = 3);

}  // namespace cc
