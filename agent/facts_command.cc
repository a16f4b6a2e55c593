// `facts`: everything node-local that parity and the later stages need, as
// one result named "facts" whose keys are sections (system, network, gpu,
// cuda, nccl, rdma, mpi, nccl_env, torch). Each section survives the
// failure of the others: an exception or a hung driver call becomes
// {"status":"error","reason":...} in that section only.
//
// Sections run at once, each under its own deadline (see kSectionLanes): a
// slow login shell (module systems, conda init) delays only nccl_env, which
// needs it, and a slow ompi_info only mpi. args.deadline_scale (>= 1)
// lengthens every section's deadline; the controller uses it to retest a
// node whose facts timed out under load.
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <thread>

#include "agent/commands_decl.h"
#include "agent/facts_exec.h"
#include "agent/facts_gpu.h"
#include "agent/facts_nccl.h"
#include "agent/facts_network.h"
#include "agent/facts_software.h"
#include "agent/facts_system.h"
#include "agent/nic_locality.h"
#include "agent/sysroot.h"
#include "agent/with_deadline.h"

extern char** environ;

namespace cc::agent {
namespace {

// Library probes run inside driver code that can block (a GPU that fell off
// the bus, nvmlInit without persistence mode on many GPUs takes seconds).
constexpr double kGpuDeadlineS = 60;
constexpr double kNcclDeadlineS = 30;

const char* const kSections[] = {"system", "network", "gpu",      "cuda", "nccl",
                                 "rdma",   "mpi",     "nccl_env", "torch"};

// Sections on one lane run one after another on one thread; lanes run at
// once. The library probes share a lane: they load driver libraries into
// this process (NVML, libcuda, NCCL, which loads libcuda itself), and a
// hung one must not have the next start beside it in the same driver. Every
// section that runs programs (ibv_devinfo, ompi_info, bash -l, python) or
// only reads files has its own lane.
const std::vector<std::vector<const char*>> kSectionLanes = {
    {"gpu", "cuda", "nccl"}, {"system"}, {"network"}, {"rdma"}, {"mpi"}, {"nccl_env"}, {"torch"},
};
constexpr double kMaxDeadlineScale = 10;

struct FactsArgs {
  std::vector<std::string> library_paths;
  std::string python;
  bool login_env = false;
  std::vector<std::string> sections;  // empty: all
  double deadline_scale = 1;          // every section's deadline times this
};

Status ParseArgs(const Json& args, FactsArgs* out) {
  if (!args.is_object()) return Status::BadArgument("facts: args must be an object");
  if (args.contains("library_paths") && !args["library_paths"].is_null()) {
    const Json& lp = args["library_paths"];
    if (!lp.is_array()) return Status::BadArgument("facts: args.library_paths must be an array");
    for (const auto& p : lp) {
      if (!p.is_string()) {
        return Status::BadArgument("facts: args.library_paths holds a non-string: " + p.dump());
      }
      out->library_paths.push_back(p);
    }
  }
  if (args.contains("python") && !args["python"].is_null()) {
    if (!args["python"].is_string())
      return Status::BadArgument("facts: args.python must be a string");
    out->python = args["python"];
  }
  if (args.contains("login_env") && !args["login_env"].is_null()) {
    if (!args["login_env"].is_boolean()) {
      return Status::BadArgument("facts: args.login_env must be true or false");
    }
    out->login_env = args["login_env"];
  }
  if (args.contains("deadline_scale") && !args["deadline_scale"].is_null()) {
    const Json& d = args["deadline_scale"];
    if (!d.is_number() || d.get<double>() < 1 || d.get<double>() > kMaxDeadlineScale) {
      return Status::BadArgument("facts: args.deadline_scale must be a number from 1 to " +
                                 std::to_string(static_cast<int>(kMaxDeadlineScale)) + ", not " +
                                 d.dump());
    }
    out->deadline_scale = d.get<double>();
  }
  if (args.contains("sections") && !args["sections"].is_null()) {
    const Json& s = args["sections"];
    if (!s.is_array()) return Status::BadArgument("facts: args.sections must be an array");
    for (const auto& n : s) {
      bool known = false;
      for (const char* k : kSections) known = known || (n.is_string() && n == k);
      if (!known) {
        std::string all;
        for (const char* k : kSections) all += std::string(all.empty() ? "" : ", ") + k;
        return Status::BadArgument("facts: unknown section " + n.dump() + " (known: " + all + ")");
      }
      out->sections.push_back(n);
    }
  }
  return Status::Ok();
}

EnvMap NcclEnviron() {
  EnvMap m;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    for (auto& [k, v] : NcclVarsFromEnvText(*e, '\0')) m[k] = v;
  }
  return m;
}

std::string Home() {
  if (const char* h = std::getenv("HOME"); h && *h) return h;
  if (passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return "";
}

std::vector<std::string> Interfaces(const Sysroot& root) {
  std::vector<std::string> names;
  for (const auto& n : root.List("/sys/class/net")) {
    if (root.IsDir("/sys/class/net/" + n)) names.push_back(n);
  }
  return names;
}

Json SkipFixture(const Sysroot& root, const char* what) {
  return {{"status", "skip"},
          {"reason", "sysroot " + root.root() + " is not the real root: " + what +
                         " is only probed on the running system"}};
}

Json RunSection(const std::string& name, const FactsArgs& a, const Sysroot& root) {
  if (name == "system") return CollectSystemFacts(root);
  if (name == "network") return CollectNetworkFacts(root);
  if (name == "rdma") return CollectRdmaFacts(root);
  if (name == "mpi") return CollectMpiFacts(root);
  if (name == "torch") return CollectTorchFacts(root, a.python);
  if (name == "nccl_env") {
    NcclEnvOptions o;
    o.environ = NcclEnviron();
    o.home = Home();
    o.login_env = a.login_env;
    o.interfaces = Interfaces(root);
    o.ib_devices = root.List("/sys/class/infiniband");
    return CollectNcclEnv(root, o);
  }
  GpuProbeOptions g;
  g.library_paths = a.library_paths;
  if (name == "gpu") {
    if (!root.IsReal()) return SkipFixture(root, "NVML");
    return WithDeadline("NVML", FactsDeadlineS(kGpuDeadlineS), [g] { return CollectGpuFacts(g); });
  }
  if (name == "cuda") {
    if (!root.IsReal()) return SkipFixture(root, "libcuda");
    return WithDeadline("cuInit", FactsDeadlineS(kGpuDeadlineS),
                        [g] { return CollectCudaFacts(g); });
  }
  if (name == "nccl") {
    if (!root.IsReal()) return SkipFixture(root, "libnccl");
    auto paths = a.library_paths;
    return WithDeadline("ncclGetVersion", FactsDeadlineS(kNcclDeadlineS),
                        [paths] { return CollectNcclFacts(paths); });
  }
  return {{"status", "error"}, {"reason", "no collector for section " + name}};
}

// One lane's sections, in order; what they found goes to `facts` and the
// exceptions' texts to `errors` (the caller logs them: CommandContext is
// not for other threads).
struct LaneOutput {
  Json facts = Json::object();
  std::vector<std::string> errors;
};

void RunLane(const std::vector<const char*>& lane, const FactsArgs& a, const Sysroot& root,
             LaneOutput* out) {
  for (const char* name : lane) {
    if (!a.sections.empty() &&
        std::find(a.sections.begin(), a.sections.end(), name) == a.sections.end()) {
      continue;
    }
    try {
      out->facts[name] = RunSection(name, a, root);
    } catch (const std::exception& e) {
      out->facts[name] = {{"status", "error"}, {"reason", std::string("exception: ") + e.what()}};
      out->errors.push_back(std::string("facts: section ") + name + ": " + e.what());
    }
  }
}

// Runs every lane on its own thread and waits for all: each section bounds
// its own time (WithDeadline, RunProgram's deadline).
Json RunAllSections(const FactsArgs& a, const Sysroot& root, CommandContext& ctx) {
  std::vector<LaneOutput> outputs(kSectionLanes.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < kSectionLanes.size(); ++i) {
    threads.emplace_back(RunLane, std::cref(kSectionLanes[i]), std::cref(a), std::cref(root),
                         &outputs[i]);
  }
  for (std::thread& t : threads) t.join();
  Json facts = Json::object();
  for (LaneOutput& o : outputs) {
    for (auto& [name, section] : o.facts.items()) facts[name] = std::move(section);
    for (const std::string& e : o.errors) ctx.Log("error", e);
  }
  return facts;
}

}  // namespace

Status RunFacts(const Json& args, CommandContext& ctx) {
  FactsArgs a;
  if (Status s = ParseArgs(args, &a); !s.ok()) return s;
  Sysroot root(ctx.root());
  SetFactsDeadlineScale(a.deadline_scale);
  Json facts = RunAllSections(a, root, ctx);
  // Locality needs two sections' answers: the GPUs' bus ids and the NICs'.
  if (facts.contains("gpu") && facts.contains("network") && facts["network"].is_object()) {
    Json ib = facts.contains("rdma") && facts["rdma"].is_object()
                  ? facts["rdma"].value("ib_devices", Json::array())
                  : Json::array();
    facts["network"]["gpu_locality"] = GpuNicLocality(root, facts["gpu"], facts["network"], ib);
  }
  ctx.Result("facts", facts);
  return Status::Ok();
}

}  // namespace cc::agent
