// Bounding a section that calls into driver code (NVML, libcuda, NCCL),
// which can block for good on a GPU that fell off the bus: shared by the
// facts and health commands.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace cc::agent {

// Runs fn on its own thread and waits up to `seconds`. Returns fn's
// section, {"status": "error", "reason": "exception: ..."} when it threw,
// or {"status": "error", "reason": "<what> did not return within N s ..."}
// on timeout. On timeout the thread is left behind (a call stuck in a
// driver cannot be cancelled), so fn must own everything it touches.
nlohmann::json WithDeadline(const std::string& what, double seconds,
                            std::function<nlohmann::json()> fn);

}  // namespace cc::agent
