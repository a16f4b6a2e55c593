// The checked iterations of one size (the `nccl` request's check_iters,
// for burn-in): after the timed iterations, each further AllReduce's
// output is checked exactly. This tallies those checks and says what the
// "size" result and the run's failure carry about them. No CUDA, no NCCL.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

namespace cc::agent {

struct NcclCheckedIters {
  int iters = 0;       // checked iterations recorded
  int mismatched = 0;  // of them, those whose output was not exact
  // The first iteration that was not exact: its number (1-based; 0 while
  // none was), how many elements it got wrong over the local ranks, and its
  // first wrong element {"rank","index","got","want"}.
  int first_iter = 0;
  size_t first_elements = 0;
  nlohmann::json first;

  // Records the next iteration: `wrong` elements differed from the
  // expected sums, `first_wrong` the first of them (ignored when wrong is 0).
  void Add(size_t wrong, const nlohmann::json& first_wrong);

  // Sets "checked_iters" and "check_mismatches" in a "size" result and,
  // when an iteration mismatched, "first_check_mismatch"
  // {"iter","elements","rank","index","got","want"} and "data_ok" false:
  // data_ok means every check of the size was exact.
  void AddTo(nlohmann::json* size) const;
};

// Why a "size" result fails the run; "" when its data was exact. `at`
// names the size ("1048576 bytes", "bf16 1048576 bytes"). The timed
// iterations' check comes first, then the checked iterations, naming the
// first one that mismatched.
std::string NcclDataFailure(const nlohmann::json& size, const std::string& at);

}  // namespace cc::agent
