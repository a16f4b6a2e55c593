// `health`: what says a node is degraded right now, as one result named
// "health" with a key per section asked (docs/health-readings.md): "gpu"
// (NVML: PCIe link, ECC, remapped rows, clocks, NVLink errors, fabric),
// "kernel_log" (Xid and SXid lines) and "ib" (port states and error
// counters). The controller asks for all three before the load stages and
// for "ib" alone after them, to see which counters grew.
//
// args (all optional): library_paths (where to look for libnvidia-ml first),
// sections (default all), since_s (unix seconds: older kernel-log events
// are left out), nvml_candidates (tests: the exact NVML files to try).
#include <algorithm>
#include <optional>

#include "agent/commands_decl.h"
#include "agent/health_gpu.h"
#include "agent/health_ib.h"
#include "agent/kernel_log.h"
#include "agent/sysroot.h"
#include "agent/with_deadline.h"

namespace cc::agent {
namespace {

// nvmlInit on a node with many GPUs and no persistence mode takes seconds;
// a GPU that fell off the bus can block NVML for good.
constexpr double kGpuDeadlineS = 60;

const char* const kSections[] = {"gpu", "kernel_log", "ib"};

struct HealthArgs {
  GpuProbeOptions gpu;                // library_paths, nvml_candidates
  std::vector<std::string> sections;  // empty: all
  std::optional<double> since_s;
};

Status StringList(const Json& args, const char* key, std::vector<std::string>* out) {
  if (!args.contains(key) || args[key].is_null()) return Status::Ok();
  const Json& list = args[key];
  if (!list.is_array()) {
    return Status::BadArgument(std::string("health: args.") + key + " must be an array");
  }
  for (const Json& s : list) {
    if (!s.is_string()) {
      return Status::BadArgument(std::string("health: args.") + key +
                                 " holds a non-string: " + s.dump());
    }
    out->push_back(s.get<std::string>());
  }
  return Status::Ok();
}

Status ParseArgs(const Json& args, HealthArgs* out) {
  if (!args.is_object()) return Status::BadArgument("health: args must be an object");
  for (Status s : {StringList(args, "library_paths", &out->gpu.library_paths),
                   StringList(args, "nvml_candidates", &out->gpu.nvml_candidates),
                   StringList(args, "sections", &out->sections)}) {
    if (!s.ok()) return s;
  }
  for (const std::string& name : out->sections) {
    if (std::find(std::begin(kSections), std::end(kSections), name) == std::end(kSections)) {
      return Status::BadArgument("health: unknown section \"" + name +
                                 "\" (known: gpu, kernel_log, ib)");
    }
  }
  if (args.contains("since_s") && !args["since_s"].is_null()) {
    if (!args["since_s"].is_number()) {
      return Status::BadArgument("health: args.since_s must be a number (unix seconds), not " +
                                 args["since_s"].dump());
    }
    out->since_s = args["since_s"].get<double>();
  }
  return Status::Ok();
}

Json RunSection(const std::string& name, const HealthArgs& a, const std::string& root) {
  if (name == "kernel_log") return CollectKernelLog(Sysroot(root), a.since_s);
  if (name == "ib") return CollectIbHealth(Sysroot(root));
  GpuProbeOptions options = a.gpu;
  return WithDeadline("NVML", kGpuDeadlineS,
                      [options, root] { return CollectGpuHealth(options, Sysroot(root)); });
}

}  // namespace

Status RunHealth(const Json& args, CommandContext& ctx) {
  HealthArgs a;
  if (Status s = ParseArgs(args, &a); !s.ok()) return s;
  Json health = Json::object();
  for (const char* name : kSections) {
    if (!a.sections.empty() &&
        std::find(a.sections.begin(), a.sections.end(), name) == a.sections.end()) {
      continue;
    }
    // A section that throws is that section's error; the others still run.
    try {
      health[name] = RunSection(name, a, ctx.root());
    } catch (const std::exception& e) {
      health[name] = {{"status", "error"}, {"reason", std::string("exception: ") + e.what()}};
      ctx.Log("error", std::string("health: section ") + name + ": " + e.what());
    }
  }
  ctx.Result("health", health);
  return Status::Ok();
}

}  // namespace cc::agent
