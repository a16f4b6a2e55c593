// Version pins from the inventory's [expect] table, and the version order
// they are judged by.
//
//   driver = "550.54.15"      exact: the value's leading parts equal these
//                             ("2.18" matches "2.18.3", not "2.180")
//   nccl   = ">=2.18,<3"      comparisons (<, <=, >, >=, ==, !=), joined by
//                             commas; all must hold
//   os     = "Ubuntu 22.04"   not a version (no leading digit): compared as
//                             a plain string
//
// Pure functions; no I/O, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace cc {

// Orders two version strings: negative, 0 or positive. A version is read as
// runs of digits (compared as numbers: 2.9 < 2.18, "05" == "5") and runs of
// letters (compared as text); every other character only separates. A
// missing trailing number counts as 0 ("12.4" == "12.4.0" < "12.4.1"); a
// missing part where the other has letters counts as newer, so
// pre-releases sort first ("2.18rc1" < "2.18"). Anything after '+' is
// build metadata and does not order ("2.28.9+cuda13.0" == "2.28.9"). A
// leading 'v' before a digit is dropped. Strings without digits fall out of
// the same rules as text.
int CompareVersions(const std::string& a, const std::string& b);

// True when `s` reads as a version: a digit first, after an optional 'v'.
bool IsVersionLike(const std::string& s);

enum class PinOp {
  kExact,  // bare value: prefix match for versions, string equality else
  kEq,     // "==": the same as a bare value
  kNe,     // "!=": not kEq
  kLt,
  kLe,
  kGt,
  kGe,
};

struct PinClause {
  PinOp op = PinOp::kExact;
  std::string operand;  // trimmed; a version for the ordering operators
};

struct VersionPin {
  std::string text;                // as written, trimmed (for messages)
  std::vector<PinClause> clauses;  // all must hold; never empty
};

// Parses a pin. kBadInventory naming the pin and the reason for an empty
// pin, an unknown operator ("=>", "="), a missing operand, an ordering
// operator on something that is not a version (">=abc"), a comma-joined
// part without an operator (">=2.18,2.19"), or a comma in a bare version
// ("2.18,2.19": a choice of versions is not supported).
Result<VersionPin> ParseVersionPin(const std::string& pin);

// True when `value` satisfies every clause. Ordering clauses never match a
// value that is not version-like ("", "unknown").
bool Matches(const VersionPin& pin, const std::string& value);

}  // namespace cc
