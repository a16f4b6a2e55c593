#include "orchestrator/run/run_liveness.h"

namespace cc {

std::optional<ControllerRecord> ControllerFromMeta(const nlohmann::json& meta) {
  if (!meta.is_object()) return std::nullopt;
  auto it = meta.find("controller");
  if (it == meta.end() || !it->is_object()) return std::nullopt;
  ControllerRecord c;
  c.host = it->value("host", std::string());
  c.pid = it->contains("pid") && (*it)["pid"].is_number_integer() ? (*it)["pid"].get<int64_t>() : 0;
  c.lock = it->value("lock", std::string());
  if (c.host.empty() || c.pid <= 0) return std::nullopt;
  return c;
}

nlohmann::json ControllerToMeta(const ControllerRecord& c) {
  nlohmann::json j = {{"host", c.host}, {"pid", c.pid}};
  if (!c.lock.empty()) j["lock"] = c.lock;
  return j;
}

RunLiveness JudgeRunLiveness(const std::string& stored_status,
                             const std::optional<ControllerRecord>& controller,
                             const LivenessProbe& probe) {
  if (stored_status != "running") return {stored_status, ""};
  if (!controller) {
    return {"running",
            "no controller recorded (stored by an older clustercheck): cannot "
            "tell whether it still runs"};
  }
  const ControllerRecord& c = *controller;
  std::string who = "controller pid " + std::to_string(c.pid) + " on " + c.host;
  bool here = c.host == probe.this_host;
  bool has_lock = !c.lock.empty();
  if (has_lock && probe.lock == LockState::kHeld) {
    return {"running", who + " holds its lock on " + c.lock};
  }
  if (!here) {
    return {"running", who + ", not this host (" + probe.this_host +
                           "): cannot tell whether it still runs; ask there"};
  }
  if (has_lock && probe.lock == LockState::kFree) {
    return {"killed", who + " died without finishing the run (its lock on " + c.lock + " is free)"};
  }
  // No lock to go by: the pid decides. A reused pid keeps it "running",
  // the safe side.
  if (probe.pid_alive) return {"running", who + " is alive"};
  return {"killed", who + " died without finishing the run (no such process)"};
}

}  // namespace cc
