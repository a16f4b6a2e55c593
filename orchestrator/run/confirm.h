// Confirmation before accusation (docs/architecture.md): no pair is accused on
// one attempt. A pair stage runs its first attempt in a burst; every `fail`
// or `hang` is then tested again quietly (QuietRounds: no node is in two
// pairs of one round, so one prober per receiver at a time), after the
// burst and with a longer deadline, and the two attempts are merged by
// Confirm():
//   - the retest agrees (fail or hang again): the result stands, and its
//     evidence holds both attempts;
//   - the retest disagrees (pass or warn): the result becomes `warn` with
//     evidence {"confirmation": "flaky"}; analysis names it as a `flaky`
//     pair verdict with both attempts;
//   - the retest could not run (error or skip): the first result stands,
//     and the evidence says why it is unconfirmed.
// Every merged result carries evidence["attempts"] = [first, second], each
// {outcome, state, message, value}, and evidence["confirmation"] =
// "confirmed" | "flaky" | "unconfirmed".
//
// Pure: no I/O; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "common/outcome.h"
#include "orchestrator/store/store.h"

namespace cc {

// Values of evidence["confirmation"].
inline constexpr const char* kConfirmed = "confirmed";
inline constexpr const char* kFlaky = "flaky";
inline constexpr const char* kUnconfirmed = "unconfirmed";

// True for the outcomes that must be confirmed before a verdict names them.
inline bool NeedsConfirmation(Outcome o) { return IsFailOrHang(o); }

// Indices into `results` of the ones to test again, in order.
std::vector<size_t> ToConfirm(const std::vector<PairResult>& results);

// The merged result of a first attempt and its retest (see the header
// comment). `second` is the same pair and check tested again.
PairResult Confirm(const PairResult& first, const PairResult& second);

// True when `r` is a merged result whose retest disagreed.
bool IsFlaky(const PairResult& r);

// Splits pairs into rounds in which no node appears twice (each node sends
// or receives for at most one pair at a time), keeping the given order
// within a round. Greedy: at most 2*max_degree-1 rounds. Node names are
// compared as strings; a pair (a, a) is its own round.
std::vector<std::vector<std::pair<std::string, std::string>>> QuietRounds(
    const std::vector<std::pair<std::string, std::string>>& pairs);

// Counts kept in the run meta under the flat key "retests.<stage>" (see
// StageContext::RecordRetests): {"retested", "confirmed", "flaky",
// "unconfirmed"}.
struct RetestCounts {
  int retested = 0, confirmed = 0, flaky = 0, unconfirmed = 0;
  void Add(const PairResult& merged);
  nlohmann::json ToJson() const;
};

}  // namespace cc
