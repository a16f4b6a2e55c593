#include "orchestrator/run/fanout.h"

#include <atomic>
#include <thread>
#include <vector>

namespace cc {

void SlidingWindow(size_t count, size_t window, const std::function<void(size_t)>& fn) {
  if (count == 0) return;
  if (window == 0) window = 1;
  size_t threads = std::min(count, window);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < count; i = next++) fn(i);
  };
  if (threads == 1) {
    worker();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (size_t t = 0; t < threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
}

}  // namespace cc
