// The outcome of every check (docs/architecture.md "Outcomes and exit codes").
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cc {

enum class Outcome { kPass, kWarn, kFail, kHang, kSkip, kError };

const char* OutcomeName(Outcome o);  // "pass", "warn", ...
std::optional<Outcome> ParseOutcome(std::string_view s);
// Worse-first order used when folding: hang > fail > error > warn > skip > pass.
int OutcomeSeverity(Outcome o);
inline Outcome Worse(Outcome a, Outcome b) {
  return OutcomeSeverity(a) >= OutcomeSeverity(b) ? a : b;
}
// Whether a check failed or hung: what makes `clustercheck run` exit 1,
// what confirmation tests again, and what accuses a node or a link.
inline bool IsFailOrHang(Outcome o) { return o == Outcome::kFail || o == Outcome::kHang; }
// Whether a check worked, perhaps with a note: what clears an accusation.
inline bool IsPassOrWarn(Outcome o) { return o == Outcome::kPass || o == Outcome::kWarn; }

// Exit codes of `clustercheck` (one small header, as ninja does).
inline constexpr int kExitOk = 0;           // nothing failed or hung
inline constexpr int kExitFailed = 1;       // something failed or hung
inline constexpr int kExitUsage = 2;        // bad command line or inventory
inline constexpr int kExitUnjudgeable = 3;  // too little of the cluster reached
inline constexpr int kExitInterrupted = 130;

}  // namespace cc
