// `nccl` and `nccl_id`: NCCL AllReduce across this process's GPUs as part
// of a communicator that may span processes and nodes.
//
// Rendezvous: NCCL's unique id embeds the address of a bootstrap listener
// opened in the process that created it, so that process must live on and
// hold rank 0. The `nccl` request for rank_base 0 therefore comes without
// unique_id: the agent creates the id and emits result "nccl_id"
// {"id": <256 hex digits>} before it waits for the others; the controller
// passes the id on in the other processes' requests.
//
// Messages of `nccl`, in order (any may be missing when a step ends early):
//   result "setup"    {"nccl_version","nccl_path","cuda_path","cuda_driver",
//                      "nonblocking_init"}
//   result "nccl_id"  {"id"}                          (rank 0's process only)
//   result "gpus"     {"gpus":[{"index","rank","pci_bus_id"}]}
//   progress          one per step ("init", "allreduce 1048576 bytes",
//                     "allreduce bf16 1048576 bytes"): per dtype, each size
//   result "size"     one per dtype and size: {"bytes","count","dtype","time_us",
//                      "algbw","busbw","data_ok","mismatches","checked_iters",
//                      "check_mismatches",...} (nccl_checked_iters.h)
//   result "nccl_log" {"text","bytes","files"}         NCCL's own INFO log
//   result "outcome"  {"outcome":"pass|fail|hang|skip|error", "reason",
//                      "step"}                                   always last
// stdin closing, or a control line {"cmd":"abort"}, aborts the run.
//
// NCCL reads its environment once per process, so the env of the first
// request that loads NCCL stays in force for the life of the agent.
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "agent/commands_decl.h"
#include "agent/cuda_api.h"
#include "agent/facts_nccl.h"
#include "agent/nccl_api.h"
#include "agent/nccl_checked_iters.h"
#include "agent/nccl_request.h"
#include "agent/nccl_run.h"

namespace cc::agent {
namespace {

struct ProcessState {
  std::mutex mu;
  std::string log_dir;
  std::map<std::string, size_t> read_upto;  // log file -> bytes already sent
  std::vector<std::pair<std::string, std::string>> env_applied;
  bool env_set = false;
};

ProcessState& State() {
  static ProcessState* state = new ProcessState();  // outlives atexit
  return *state;
}

void RemoveLogDir() {
  ProcessState& s = State();
  if (s.log_dir.empty()) return;
  if (DIR* d = opendir(s.log_dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        unlink((s.log_dir + "/" + e->d_name).c_str());
      }
    }
    closedir(d);
  }
  rmdir(s.log_dir.c_str());
}

// Creates the per-process log directory and sets NCCL's environment, once.
Status PrepareEnvironment(const NcclRequest& request, CommandContext& ctx) {
  ProcessState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.env_set) {
    auto want = NcclEnvironment(request, s.log_dir);
    if (want != s.env_applied) {
      ctx.Log("warn",
              "NCCL reads its environment once per process: this request's env is "
              "ignored, the first request's stays in force");
    }
    return Status::Ok();
  }
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/clustercheck-nccl-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr) {
    return Status::Io("nccl: cannot create a log directory " + pattern + ": " +
                      std::strerror(errno));
  }
  s.log_dir = buf.data();
  std::atexit(RemoveLogDir);
  s.env_applied = NcclEnvironment(request, s.log_dir);
  for (const auto& [k, v] : s.env_applied) setenv(k.c_str(), v.c_str(), 1);
  s.env_set = true;
  return Status::Ok();
}

// What NCCL wrote to its log files since the last call.
Json ReadNewLog() {
  ProcessState& s = State();
  std::lock_guard<std::mutex> lock(s.mu);
  std::string text;
  Json files = Json::array();
  if (DIR* d = opendir(s.log_dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::string path = s.log_dir + "/" + e->d_name;
      std::ifstream in(path, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string all = ss.str();
      size_t& upto = s.read_upto[path];
      if (all.size() > upto) text += all.substr(upto);
      upto = all.size();
      files.push_back(path);
    }
    closedir(d);
  }
  size_t bytes = text.size();
  return {{"text", CapLog(text, kMaxNcclLogBytes)}, {"bytes", bytes}, {"files", files}};
}

void EmitOutcome(CommandContext& ctx, const std::string& outcome, const std::string& reason,
                 const std::string& step = "", Json extra = Json::object()) {
  Json data = std::move(extra);
  data["outcome"] = outcome;
  if (!reason.empty()) data["reason"] = reason;
  if (!step.empty()) data["step"] = step;
  ctx.Result("outcome", data);
}

const char* OutcomeOf(StepEnd end) {
  switch (end) {
    case StepEnd::kDone:
      return "pass";
    case StepEnd::kHang:
      return "hang";
    case StepEnd::kAborted:
      return "error";
    case StepEnd::kFail:
      break;
  }
  return "fail";
}

struct Libraries {
  CudaApi cuda;
  NcclApi nccl;
};

// Loads libcuda (and initialises the driver) and libnccl. nullopt after
// emitting the outcome (skip when absent, fail when broken).
std::optional<Libraries> LoadLibraries(const NcclRequest& request, CommandContext& ctx) {
  DynlibSearch cuda_search;
  auto cuda = LoadCudaApi(LibraryPathsFor(request.library_paths, "libcuda.so"), &cuda_search);
  if (!cuda.ok()) {
    EmitOutcome(ctx, "skip", cuda.status().message(), "load libcuda",
                {{"searched", cuda_search.SearchedJson()}});
    return std::nullopt;
  }
  CUresult r = cuda->Init(0);
  if (r != CUDA_SUCCESS) {
    // No GPU (or only the toolkit's stub libcuda, no driver) is a skip; a
    // driver that cannot start on a GPU node is a fault.
    bool none = r == CUDA_ERROR_NO_DEVICE || r == CUDA_ERROR_STUB_LIBRARY;
    EmitOutcome(ctx, none ? "skip" : "fail", "cuInit(0): " + cuda->Describe(r), "cuInit",
                {{"cuda_path", cuda->path}});
    return std::nullopt;
  }
  DynlibSearch nccl_search;
  auto nccl = LoadNcclApi(LibraryPathsFor(request.library_paths, "libnccl.so"), &nccl_search);
  if (!nccl.ok()) {
    EmitOutcome(ctx, "skip", nccl.status().message(), "load libnccl",
                {{"searched", nccl_search.SearchedJson()}});
    return std::nullopt;
  }
  return Libraries{std::move(*cuda), std::move(*nccl)};
}

// The id for this process's communicator: made here (and emitted) when
// this process holds rank 0, else the one in the request.
std::optional<ncclUniqueId> UniqueId(const NcclRequest& request, const NcclApi& nccl,
                                     CommandContext& ctx) {
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (!request.unique_id_hex.empty()) {
    auto bytes = HexDecode(request.unique_id_hex,
                           sizeof id.internal);  // validated already
    if (bytes.ok()) std::memcpy(id.internal, bytes->data(), sizeof id.internal);
    return id;
  }
  ncclResult_t r = nccl.GetUniqueId(&id);
  if (r != ncclSuccess) {
    EmitOutcome(ctx, "fail", "ncclGetUniqueId: " + nccl.Describe(r), "unique id");
    return std::nullopt;
  }
  ctx.Result("nccl_id", {{"id", HexEncode(id.internal, sizeof id.internal)}});
  return id;
}

// Runs the steps; returns how the run ended, *phase the step it ended in
// and, for data errors, *data_failure why.
Step RunSteps(NcclRun& run, const NcclRequest& request, const ncclUniqueId& id, CommandContext& ctx,
              std::string* phase, std::string* data_failure) {
  const int64_t total = 1 + static_cast<int64_t>(request.sizes.size() * request.dtypes.size());
  int64_t done = 1;
  *phase = "init";
  ctx.Progress(0, total, *phase);
  if (Step s = run.InitComms(id); !s.ok()) return s;
  for (NcclDtype dtype : request.dtypes) {
    for (uint64_t bytes : request.sizes) {
      *phase = NcclStepName(bytes, dtype);
      ctx.Progress(done++, total, *phase);
      Json result;
      if (Step s = run.RunSize(bytes, dtype, &result); !s.ok()) return s;
      ctx.Result("size", result);
      if (data_failure->empty()) {
        // "allreduce 1048576 bytes" -> "1048576 bytes", "bf16 1048576 bytes"
        *data_failure = NcclDataFailure(result, phase->substr(sizeof "allreduce"));
      }
    }
  }
  ctx.Progress(total, total, "done");
  *phase = "finalize";
  return run.Finish();
}

}  // namespace

Status RunNccl(const Json& args, CommandContext& ctx) {
  auto request = ParseNcclRequest(args);
  if (!request.ok()) return request.status();
  if (Status s = PrepareEnvironment(*request, ctx); !s.ok()) return s;
  std::optional<Libraries> libs = LoadLibraries(*request, ctx);
  if (!libs) return Status::Ok();
  int driver = 0;
  libs->cuda.DriverGetVersion(&driver);
  ctx.Result("setup", {{"nccl_version", NcclVersionString(libs->nccl.version)},
                       {"nccl_path", libs->nccl.path},
                       {"cuda_path", libs->cuda.path},
                       {"cuda_driver", driver},
                       {"nonblocking_init", libs->nccl.CommInitRankConfig != nullptr}});
  std::optional<ncclUniqueId> id = UniqueId(*request, libs->nccl, ctx);
  if (!id) return Status::Ok();

  Step end;
  std::string phase = "setup", data_failure;
  {
    NcclRun run(libs->cuda, libs->nccl, *request, ctx);
    end = run.SetUpGpus();
    if (end.ok()) {
      ctx.Result("gpus", {{"gpus", run.GpuJson()}});
      end = RunSteps(run, *request, *id, ctx, &phase, &data_failure);
    }
    if (!end.ok()) run.AbortAll();
  }  // resources released before the log is read: it ends with NCCL's teardown
  ctx.Result("nccl_log", ReadNewLog());
  if (!data_failure.empty() && (end.ok() || phase == "finalize")) {
    EmitOutcome(ctx, "fail", data_failure, "data check");
  } else if (!end.ok() && phase == "finalize") {
    // Every size ran and checked out; only the teardown misbehaved.
    EmitOutcome(ctx, "warn", end.detail, phase);
  } else if (!end.ok()) {
    EmitOutcome(ctx, OutcomeOf(end.end), end.detail, phase);
  } else {
    EmitOutcome(ctx, "pass", "");
  }
  return Status::Ok();
}

// `nccl_id`: a unique id made in this agent process. Only useful when a
// later `nccl` request to the same process (rank_base 0, this id) follows,
// since the id names a listener here; tests use it to prove NCCL loads.
Status RunNcclId(const Json& args, CommandContext& ctx) {
  Json a = args.is_object() ? args : Json::object();
  Json probe = a;
  probe["nranks"] = 1;
  probe.erase("unique_id");
  auto request = ParseNcclRequest(probe);
  if (!request.ok()) return request.status();
  if (Status s = PrepareEnvironment(*request, ctx); !s.ok()) return s;
  DynlibSearch search;
  auto nccl = LoadNcclApi(LibraryPathsFor(request->library_paths, "libnccl.so"), &search);
  if (!nccl.ok()) {
    EmitOutcome(ctx, "skip", nccl.status().message(), "load libnccl",
                {{"searched", search.SearchedJson()}});
    return Status::Ok();
  }
  std::optional<ncclUniqueId> id = UniqueId(*request, *nccl, ctx);
  if (!id) return Status::Ok();
  EmitOutcome(ctx, "pass", "", "",
              {{"nccl_version", NcclVersionString(nccl->version)}, {"nccl_path", nccl->path}});
  return Status::Ok();
}

}  // namespace cc::agent
