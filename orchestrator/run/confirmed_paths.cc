#include "orchestrator/run/confirmed_paths.h"

namespace cc {

void ConfirmedPaths::Add(const std::string& src, const std::string& addr, const std::string& state,
                         const std::string& stage) {
  std::lock_guard<std::mutex> l(mu_);
  paths_.try_emplace({src, addr}, state, stage);
}

std::string ConfirmedPaths::Why(const std::string& src, const std::string& addr,
                                const std::string& state) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = paths_.find({src, addr});
  if (it == paths_.end() || it->second.first != state) return "";
  return "the " + it->second.second + " stage's quiet retest of " + src + " -> " + addr + " was " +
         state + " too";
}

}  // namespace cc
