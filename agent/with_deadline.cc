#include "agent/with_deadline.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

namespace cc::agent {

using Json = nlohmann::json;

Json WithDeadline(const std::string& what, double seconds, std::function<Json()> fn) {
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    Json result;
  };
  auto state = std::make_shared<State>();
  std::thread t([state, fn = std::move(fn)] {
    Json r;
    try {
      r = fn();
    } catch (const std::exception& e) {
      r = {{"status", "error"}, {"reason", std::string("exception: ") + e.what()}};
    }
    std::lock_guard<std::mutex> lock(state->mu);
    state->result = std::move(r);
    state->done = true;
    state->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(state->mu);
  bool done =
      state->cv.wait_for(lock, std::chrono::milliseconds(static_cast<long long>(seconds * 1000)),
                         [&state] { return state->done; });
  if (!done) {
    lock.unlock();
    t.detach();
    return {{"status", "error"},
            {"reason", what + " did not return within " +
                           std::to_string(static_cast<long long>(seconds)) +
                           " s (a hung GPU or driver?)"}};
  }
  Json r = std::move(state->result);
  lock.unlock();
  t.join();
  return r;
}

}  // namespace cc::agent
