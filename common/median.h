// The median of a sample: the middle value, or the mean of the two middle
// ones. The yardstick every "slower than the rest" judgement uses (pair
// bandwidth outliers, the mpi stage's suspects, the nccl stage's busbw).
#pragma once

#include <algorithm>
#include <vector>

namespace cc {

// 0 for an empty sample.
inline double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace cc
