// The parity judgement: every node's flat facts (facts_fields.h) judged
// three ways, as docs/architecture.md "Stages" describes `parity`:
//
//   1. against [expect] pins          check "expect.<field>"
//   2. against the cluster majority   check "<field>"  (the odd node out)
//   3. against compatibility rules    check named by the rule, e.g.
//      "driver_for_cuda" (see kParityRules in parity.cc)
//
// Pure functions over plain structs; no I/O, thread-safe.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "common/status.h"

namespace cc {

struct NodeFacts {
  std::string node;
  // Flat fields: "driver" -> "550.54.15", "nccl_env.NCCL_IB_HCA" -> "mlx5".
  // A field the node did not report is absent (not "").
  std::map<std::string, std::string> fields;
  std::optional<int> expected_gpus;  // the inventory's `gpus`, when given
  bool has_ib = false;               // the node has InfiniBand/RoCE devices
  // Fields whose source failed or timed out (facts_fields.h UnknownFields):
  // field, or "prefix.*" for all fields under it, -> why it is unknown.
  // Unknown is not "nothing": such a field is never voted, pinned or ruled
  // on for this node; its findings are `skip` naming the reason (the facts
  // stage gives the node the `error`).
  std::map<std::string, std::string> unknown;
};

struct ParityOptions {
  // [expect] pins by field ("nccl" -> ">=2.18"); see version_pin.h.
  std::map<std::string, std::string> expect;
  // Not judged: a field name drops its majority and pin checks, a rule's
  // check name drops the rule; "prefix.*" matches every field under it
  // ("nccl_env.*"). Default: judge everything.
  std::vector<std::string> ignore;
};

struct ParityFinding {
  std::string node;
  std::string check;  // field, "expect.<field>", or a rule name
  Outcome outcome = Outcome::kError;
  std::string value;     // what the node has ("" when it reported nothing)
  std::string expected;  // the pin, the majority value, or the rule's need
  std::string message;   // for people; never names the node, so alike fold
  nlohmann::json evidence = nlohmann::json::object();
};

// How a deviation from the cluster majority counts for `field`: kFail for
// what breaks a job (driver, NCCL, torch, OFED, ...), kWarn for what is
// merely odd (kernel, VBIOS, nccl_env.*, and fields not in the table).
Outcome DeviationSeverity(const std::string& field);

// Judges all nodes. Findings come grouped by check (known fields in table
// order, then the rest by name, then the rules), nodes in input order
// within a check. A judged field gives every node one finding, so the
// matrix is complete. The majority needs 2+ nodes whose field is not
// unknown, and at least one that reported it; a node missing such a field
// deviates, a node where it is unknown is `skip` and counts for no side.
// Environment variables meant to differ per node (per_node_env.h) are not
// voted. Never fails: a bad pin is an `error` finding on every node.
std::vector<ParityFinding> JudgeParity(const std::vector<NodeFacts>& nodes,
                                       const ParityOptions& opts);

// Lines for the terminal, worst verdict first, one per check, nodes folded
// into hostlists:
//   "FAIL driver: gpu007 has 535.104.05; gpu[001-006,008-016] have 550.54.15"
std::vector<std::string> SummarizeParity(const std::vector<ParityFinding>& findings);

// What a parity check judges a node against: its field's cluster majority
// ("driver"), an [expect] pin ("expect.driver"), or a compatibility rule
// ("driver_for_cuda"; see kParityRules in parity.cc).
enum class ParityCheckKind { kMajority, kPin, kRule };
ParityCheckKind ParityCheckKindOf(const std::string& check);

// What an operator does about a failing pin or rule on `who` ("node4",
// "node[3-4]"), given the finding's `expected`: "upgrade the NVIDIA driver
// on node4 to >=580.65.06 or newer, ...". "" for majority checks, whose
// remedy (be like the rest) the caller words.
std::string ParityNextStep(const std::string& check, const std::string& who,
                           const std::string& expected);

// Checks every pin of an [expect] table; kBadInventory "expect.<field>: pin
// ...: reason" for the first bad one. For inventory validation.
Status CheckExpectPins(const std::map<std::string, std::string>& expect);

}  // namespace cc
