#include "orchestrator/stages/health/node_health.h"

#include <map>
#include <string>
#include <utility>

#include "orchestrator/stages/health/xid_catalog.h"

namespace cc {
namespace {

using nlohmann::json;
using A = HealthAction;

std::optional<long long> Int(const json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  return it->get<long long>();
}

bool True(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_boolean() && j[key].get<bool>();
}

std::string Str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

// "GPU 3 (0000:5d:00.0)".
std::string GpuName(const json& g) {
  std::string s = "GPU " + std::to_string(Int(g, "index").value_or(-1));
  std::string bus = Str(g, "bus_id");
  return bus.empty() ? s : s + " (" + bus + ")";
}

std::string Check(const json& g, const char* what) {
  return "gpu" + std::to_string(Int(g, "index").value_or(-1)) + "." + what;
}

json GpuEvidence(const json& g, A action) {
  return {{"action", HealthActionName(action)},
          {"gpu", Int(g, "index").value_or(-1)},
          {"bus_id", Str(g, "bus_id")}};
}

void Add(std::vector<HealthFinding>& out, const json& g, const char* what, A action,
         const std::string& message, std::string value = "", std::string expected = "") {
  HealthFinding f = Finding(Check(g, what), action, GpuName(g) + ": " + message, std::move(value),
                            std::move(expected));
  f.evidence = GpuEvidence(g, action);
  out.push_back(std::move(f));
}

std::string GenWidth(std::optional<long long> gen, std::optional<long long> width) {
  return "gen " + (gen ? std::to_string(*gen) : std::string("?")) + " x" +
         (width ? std::to_string(*width) : std::string("?"));
}

// The link now against its maximum. A narrower link is a fault (a lane or a
// riser); a slower generation while the GPU idles may be power saving, so
// it is only a warning then.
void JudgePcie(const json& g, std::vector<HealthFinding>& out) {
  const json& p = g.value("pcie", json::object());
  const json& sys = p.value("sysfs", json());
  auto width = Int(p, "width"), max_width = Int(p, "max_width");
  auto gen = Int(p, "gen"), max_gen = Int(p, "max_gen");
  // NVML first; sysfs where NVML cannot say (the cross-check below).
  if (!width) width = Int(sys, "width");
  if (!max_width) max_width = Int(sys, "max_width");
  std::string now = GenWidth(gen, width), best = GenWidth(max_gen, max_width);
  bool narrow = width && max_width && *width < *max_width;
  bool slow = gen && max_gen && *gen < *max_gen;
  bool idle = (Int(g, "clock_event_reasons").value_or(0) & kClockReasonIdle) != 0;
  if (narrow) {
    Add(out, g, "pcie", A::kDrain,
        "PCIe link degraded to " + now + " of " + best + "; reseat or replace (riser, cable, slot)",
        now, best);
  } else if (slow) {
    A a = idle ? A::kInvestigate : A::kDrain;
    Add(out, g, "pcie", a,
        "PCIe link at " + now + " of " + best +
            (idle ? " while the GPU idles (it may save power; burn-in judges it under load)" : ""),
        now, best);
  }
  auto sys_width = Int(sys, "width");
  if (sys_width && Int(p, "width") && *sys_width != *Int(p, "width")) {
    Add(out, g, "pcie_sysfs", A::kInvestigate,
        "NVML says x" + std::to_string(*Int(p, "width")) + " but sysfs current_link_width says x" +
            std::to_string(*sys_width),
        "x" + std::to_string(*sys_width), "x" + std::to_string(*Int(p, "width")));
  }
}

void JudgeMemory(const json& g, std::vector<HealthFinding>& out) {
  const json& ecc = g.value("ecc", json::object());
  auto vol = Int(ecc, "volatile_uncorrected"), agg = Int(ecc, "aggregate_uncorrected");
  if (vol && *vol > 0) {
    Add(out, g, "ecc", A::kResetGpu,
        std::to_string(*vol) + " uncorrected ECC errors since the driver loaded",
        std::to_string(*vol), "0");
  } else if (agg && *agg > 0) {
    Add(out, g, "ecc", A::kInvestigate,
        std::to_string(*agg) + " uncorrected ECC errors in the GPU's lifetime (none since boot)",
        std::to_string(*agg), "0");
  }
  const json& rows = g.value("remapped_rows", json());
  if (True(rows, "failure")) {
    Add(out, g, "remap", A::kDrain, "row remapping failed: the GPU is out of spare rows (RMA)",
        "failed", "none");
  } else if (True(rows, "pending")) {
    Add(out, g, "remap", A::kResetGpu,
        "a row remap is pending: reset the GPU to apply it before running jobs", "pending", "none");
  } else if (True(g, "retired_pages_pending")) {
    Add(out, g, "remap", A::kResetGpu,
        "a page retirement is pending: reset the GPU to apply it before running jobs", "pending",
        "none");
  }
}

void JudgeClocks(const json& g, std::vector<HealthFinding>& out) {
  auto reasons = Int(g, "clock_event_reasons");
  if (!reasons) return;
  unsigned long long r = static_cast<unsigned long long>(*reasons);
  std::string hw;
  if (r & kClockReasonHwSlowdown) hw += "HW slowdown, ";
  if (r & kClockReasonHwThermal) hw += "HW thermal slowdown, ";
  if (r & kClockReasonHwPowerBrake) hw += "HW power brake, ";
  std::string temp =
      Int(g, "temperature_c") ? " at " + std::to_string(*Int(g, "temperature_c")) + " C" : "";
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", r);
  if (!hw.empty()) {
    hw.resize(hw.size() - 2);
    Add(out, g, "clocks", A::kInvestigate,
        "clocks held down by " + hw + temp + " (cooling, power supply or the board)", hex, "");
    out.back().outcome = Outcome::kFail;  // it slows every collective it joins
  } else if (r & kClockReasonSwPowerCap) {
    Add(out, g, "clocks", A::kInvestigate, "clocks held down by the SW power cap" + temp, hex, "");
  }
}

void JudgeLinksAndFabric(const json& g, std::vector<HealthFinding>& out) {
  const json& links = g.value("nvlinks", json::array());
  std::string down, errors;
  int active = 0;
  for (const auto& l : links) {
    if (True(l, "active")) ++active;
  }
  for (const auto& l : links) {
    std::string id = std::to_string(Int(l, "link").value_or(-1));
    if (!True(l, "active") && active > 0) down += (down.empty() ? "" : ", ") + id;
    long long sum = 0;
    const json counters = l.value("errors", json::object());
    for (const auto& [k, v] : counters.items()) {
      if (v.is_number()) sum += v.get<long long>();
    }
    if (sum > 0) errors += (errors.empty() ? "" : ", ") + id + ": " + std::to_string(sum);
  }
  if (!down.empty()) {
    Add(out, g, "nvlink", A::kResetGpu,
        "NVLink(s) " + down + " down while " + std::to_string(active) + " are up", "down " + down,
        "all up");
  } else if (!errors.empty()) {
    Add(out, g, "nvlink", A::kInvestigate,
        "NVLink error counters not zero (link: count): " + errors, errors, "0");
  }
  std::string state = Str(g, "fabric_state");
  if (!state.empty() && state != "not-supported" && state != "completed") {
    Add(out, g, "fabric", A::kReboot,
        "NVSwitch fabric registration is " + state + " (fabric manager down or failing)", state,
        "completed");
  } else if (state == "completed" && !Str(g, "fabric_status").empty() &&
             Str(g, "fabric_status") != "Success") {
    Add(out, g, "fabric", A::kReboot, "NVSwitch fabric status " + Str(g, "fabric_status"),
        Str(g, "fabric_status"), "Success");
  }
}

}  // namespace

std::vector<HealthFinding> JudgeGpus(const json& gpu, std::optional<int> expected_gpus) {
  std::vector<HealthFinding> out;
  std::string status = Str(gpu, "status");
  if (status != "ok") {
    std::string why = Str(gpu, "reason");
    if (status == "absent" || status.empty()) {
      out.push_back(NotJudged("gpu", Outcome::kSkip,
                              "no NVIDIA GPU to check: " + (why.empty() ? "not reported" : why)));
    } else {
      out.push_back(NotJudged("gpu", Outcome::kError, "NVML failed: " + why));
    }
    if (status == "absent" || status.empty() || !expected_gpus || *expected_gpus == 0) return out;
  }
  const json& gpus = gpu.value("gpus", json::array());
  if (expected_gpus && static_cast<long long>(gpus.size()) < *expected_gpus) {
    HealthFinding f = Finding("gpu.count", A::kReboot,
                              std::to_string(gpus.size()) +
                                  " GPUs answer NVML where the inventory "
                                  "says " +
                                  std::to_string(*expected_gpus) +
                                  "; drain if a reboot does not "
                                  "bring them back",
                              std::to_string(gpus.size()), std::to_string(*expected_gpus));
    f.evidence = {{"action", "reboot"}};
    out.push_back(std::move(f));
  }
  size_t before = out.size();
  for (const auto& g : gpus) {
    if (g.contains("error")) {
      Add(out, g, "nvml", A::kReboot, "NVML cannot open it: " + Str(g, "error"), "error", "ok");
      continue;
    }
    JudgePcie(g, out);
    JudgeMemory(g, out);
    JudgeClocks(g, out);
    JudgeLinksAndFabric(g, out);
  }
  if (out.size() == before && status == "ok") {
    HealthFinding f = Finding("gpu", A::kOk,
                              std::to_string(gpus.size()) +
                                  " GPUs: PCIe at maximum, no "
                                  "uncorrected ECC, no pending remap, no "
                                  "hardware slowdown");
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<HealthFinding> JudgeKernelLog(const json& log) {
  std::vector<HealthFinding> out;
  if (Str(log, "status") != "ok") {
    std::string why = Str(log, "reason");
    out.push_back(NotJudged("kernel_log", Outcome::kSkip,
                            "kernel log not read: " + (why.empty() ? "not reported" : why)));
    return out;
  }
  // One finding per (kind, code, device): a GPU that logged Xid 79 twenty
  // times is one finding with a count.
  struct Seen {
    json first, last;
    int count = 0;
  };
  std::map<std::tuple<std::string, long long, std::string>, Seen> seen;
  for (const auto& e : log.value("events", json::array())) {
    auto& s = seen[{Str(e, "kind"), Int(e, "code").value_or(-1), Str(e, "device")}];
    if (s.count++ == 0) s.first = e;
    s.last = e;
  }
  for (const auto& [key, s] : seen) {
    const auto& [kind, code, device] = key;
    std::string text = Str(s.last, "text");
    XidInfo info = kind == "SXid" ? LookupSxid(static_cast<int>(code), text)
                                  : LookupXid(static_cast<int>(code), text);
    std::string where = device.empty() ? "" : " on " + device;
    std::string times = s.count == 1 ? "" : " (" + std::to_string(s.count) + " times)";
    HealthFinding f = Finding(
        (kind == "SXid" ? "sxid." : "xid.") + std::to_string(code), info.action,
        kind + " " + std::to_string(code) + where + ": " + info.meaning + times + "; last: " + text,
        kind + " " + std::to_string(code), "");
    f.evidence = {{"action", HealthActionName(info.action)},
                  {"code", code},
                  {"kind", kind},
                  {"device", device},
                  {"count", s.count},
                  {"meaning", info.meaning},
                  {"known", info.known},
                  {"first", s.first},
                  {"last", s.last}};
    out.push_back(std::move(f));
  }
  if (out.empty()) {
    out.push_back(Finding("kernel_log", A::kOk,
                          "no Xid in " + std::to_string(Int(log, "lines").value_or(0)) +
                              " lines of " + Str(log, "source")));
  }
  if (Int(log, "dropped").value_or(0) > 0) {
    out.back().evidence["dropped"] = *Int(log, "dropped");
  }
  return out;
}

std::vector<HealthFinding> JudgeIbPortsAlone(const json& ib) {
  std::vector<HealthFinding> out;
  if (Str(ib, "status") != "ok") {
    std::string why = Str(ib, "reason");
    out.push_back(
        NotJudged("ib", Outcome::kSkip,
                  "no InfiniBand/RoCE port to check: " + (why.empty() ? "not reported" : why)));
    return out;
  }
  const json ports = ib.value("ports", json::array());
  if (ports.empty()) {
    out.push_back(
        NotJudged("ib", Outcome::kSkip,
                  "no InfiniBand/RoCE port to check: no ports under /sys/class/infiniband"));
    return out;
  }
  for (const auto& p : ports) {
    std::string port = Str(p, "device") + "/" + std::to_string(Int(p, "port").value_or(0));
    if (Str(p, "state") != "ACTIVE") continue;
    if (!p.contains("uverbs_present") || !p["uverbs_present"].is_boolean()) continue;
    if (p["uverbs_present"].get<bool>()) continue;
    HealthFinding f =
        Finding("ib." + port + ".uverbs", A::kInvestigate,
                port + " is ACTIVE but /dev/infiniband/" + Str(p, "uverbs") +
                    " is missing: RDMA cannot use it (ib_uverbs not loaded, or the container "
                    "does not pass the device)",
                "missing", "/dev/infiniband/" + Str(p, "uverbs"));
    f.outcome = Outcome::kFail;
    f.evidence = {{"action", "investigate"}, {"port", port}};
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace cc
