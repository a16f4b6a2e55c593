// A sliding window over work items (ClusterShell's fan-out): at most
// `window` items in flight; the next item starts the moment one finishes,
// with no fixed batches.
#pragma once

#include <cstddef>
#include <functional>

namespace cc {

// Calls fn(i) for i in [0, count) on at most `window` threads at once and
// returns when all calls returned. fn must not throw.
void SlidingWindow(size_t count, size_t window, const std::function<void(size_t)>& fn);

}  // namespace cc
