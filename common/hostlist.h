// Hostlists as Slurm and pdsh write them: "gpu[001-016]", "n[1-3,7]",
// "a[1-2]b[1-2]", comma-separated lists of those. Zero padding is kept.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace cc {

// Expands a hostlist. kBadArgument with the position and the reason for
// unbalanced brackets, reversed or empty ranges, non-digits, ranges above
// kMaxHostlistSize hosts in all.
inline constexpr size_t kMaxHostlistSize = 100000;
Result<std::vector<std::string>> ExpandHostlist(const std::string& hostlist);

// Folds names into the shortest hostlist: {"gpu001","gpu002","gpu004"} ->
// "gpu[001-002,004]". Names are grouped by prefix/suffix and padding width;
// order of the groups follows first appearance; numbers are sorted.
std::string FoldHostlist(const std::vector<std::string>& names);

}  // namespace cc
