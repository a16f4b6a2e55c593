// clustercheck-nccl-mpi: the `nccl` stage's test under mpirun, as
// nccl-tests users run it ([stages.nccl] launcher = "mpirun";
// orchestrator/stages/nccl/nccl_mpirun.h). One GPU per rank: the node-local rank
// (OMPI_COMM_WORLD_LOCAL_RANK) picks the device unless the request names
// the rank's "gpu". Rank 0 runs the agent's
// `nccl` command without an id, so it makes the ncclUniqueId; the moment it
// reports the id, it goes to every rank through MPI_Bcast, and the others
// run the same command with it. Everything else (library loading, init
// with its deadline and abort, the size sweep with its exact data check,
// timing, NCCL's log) is the agent's own code (agent/nccl_command.cc).
//
// Every rank writes what the command reports as lines on stdout:
//   CCNCCL {"rank":R,"type":"hello","size":N,"local_rank":L,"host":"h"}
//   CCNCCL {"rank":R,"type":"result","name":"size","data":{...}}   (agent
//          result shapes: setup, gpus, size, nccl_log, outcome, ...;
//          NCCL's log comes first as nccl_log_part lines of <= 1 KiB,
//          then nccl_log without "text" but with "parts": N)
//   CCNCCL {"rank":R,"type":"log","level":"warn","msg":"..."}
// "outcome" is always the last result of a rank. When rank 0 makes no id
// (no GPU, no libnccl), the others say so with rank 0's reason: a skip stays
// a skip. Exits 0 whenever the outcomes were written; the outcome says how
// the test went.
//
// Options: --request JSON | --request-hex HEX (the same JSON, hex encoded so
// that no launcher's quoting can touch it). The JSON holds the `nccl`
// request's sizes, dtypes, iters, warmup, check_iters, timeout_s, and "ranks": one object per
// rank with its env, library_paths and gpu (all optional).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "agent/command.h"
#include "agent/commands_decl.h"
#include "agent/nccl_request.h"

namespace {

using cc::agent::Json;

constexpr size_t kReasonBytes = 768;
// NCCL's log per rank on one line; mpirun forwards it to the controller.
constexpr size_t kLogCap = size_t{256} << 10;
// One nccl_log_part line's text: with JSON escaping and the prefix the line
// stays well under the ~4 KiB Open MPI forwards in one piece.
constexpr size_t kLogPartBytes = 1024;

// What rank 0 broadcasts: the id, or why there is none.
struct IdMessage {
  char have_id = 0;
  char id[cc::agent::kNcclUniqueIdBytes] = {};
  char outcome[16] = {};
  char reason[kReasonBytes] = {};
};

void Emit(int rank, Json j) {
  j["rank"] = rank;
  std::string line = "CCNCCL " + j.dump(-1, ' ', false, Json::error_handler_t::replace);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void Broadcast(IdMessage* m) { MPI_Bcast(m, sizeof *m, MPI_BYTE, 0, MPI_COMM_WORLD); }

class PrintContext : public cc::agent::CommandContext {
 public:
  explicit PrintContext(int rank) : rank_(rank) {}
  const std::string& root() const override { return root_; }
  void Result(const std::string& name, const Json& data) override {
    Json d = data;
    if (name == "nccl_id" && rank_ == 0 && !sent_) {
      IdMessage m;
      auto bytes = cc::agent::HexDecode(d.value("id", std::string()), sizeof m.id);
      if (bytes.ok()) {
        m.have_id = 1;
        std::memcpy(m.id, bytes->data(), sizeof m.id);
      } else {
        std::snprintf(m.outcome, sizeof m.outcome, "error");
        std::snprintf(m.reason, sizeof m.reason, "bad id from the agent code");
      }
      sent_ = true;
      Broadcast(&m);
    }
    if (name == "outcome") {
      outcome_ = d;
    }
    if (name == "nccl_log" && d.contains("text")) {
      // Open MPI forwards a rank's output in pieces of about 4 KiB and
      // interleaves the ranks' pieces (seen on the H200: two 4 KiB log
      // lines spliced into one unparsable line). So the log goes out as
      // short nccl_log_part lines, each whole on its own, and the final
      // nccl_log line says how many there were.
      std::string text = cc::agent::CapLog(d["text"].get<std::string>(), kLogCap);
      int parts = 0;
      for (size_t at = 0; at < text.size(); at += kLogPartBytes, ++parts) {
        Emit(rank_, {{"type", "result"},
                     {"name", "nccl_log_part"},
                     {"data", {{"text", text.substr(at, kLogPartBytes)}}}});
      }
      d.erase("text");
      d["parts"] = parts;
    }
    Emit(rank_, {{"type", "result"}, {"name", name}, {"data", d}});
  }
  void Log(const std::string& level, const std::string& msg) override {
    Emit(rank_, {{"type", "log"}, {"level", level}, {"msg", msg}});
  }
  void Progress(int64_t, int64_t, const std::string&) override {}
  // No controller on stdin under mpirun: only the deadlines end a step.
  std::optional<Json> NextControl(cc::Deadline deadline) override {
    std::this_thread::sleep_until(deadline.at());
    return std::nullopt;
  }

  bool sent() const { return sent_; }
  const Json& outcome() const { return outcome_; }

 private:
  int rank_;
  std::string root_ = "/";
  bool sent_ = false;
  Json outcome_;
};

// The request JSON from argv; an error text instead when it is missing.
Json ReadRequest(int argc, char** argv, std::string* error) {
  for (int i = 1; i + 1 < argc; ++i) {
    std::string a = argv[i];
    std::string text;
    if (a == "--request") {
      text = argv[i + 1];
    } else if (a == "--request-hex") {
      std::string hex = argv[i + 1];
      auto bytes = cc::agent::HexDecode(hex, hex.size() / 2);
      if (!bytes.ok()) {
        *error = "--request-hex: " + bytes.status().message();
        return Json();
      }
      text.assign(bytes->begin(), bytes->end());
    } else {
      continue;
    }
    Json j = Json::parse(text, nullptr, false);
    if (!j.is_object()) *error = "the request is not a JSON object";
    return j;
  }
  *error = "usage: clustercheck-nccl-mpi --request JSON | --request-hex HEX";
  return Json();
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* lr = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  int local_rank = lr ? std::atoi(lr) : 0;
  char host[256] = {};
  gethostname(host, sizeof host - 1);

  std::string error;
  Json req = ReadRequest(argc, argv, &error);
  Json args = Json::object();
  int gpu = local_rank;
  if (error.empty()) {
    for (const char* k : {"sizes", "dtypes", "iters", "warmup", "check_iters", "timeout_s"}) {
      if (req.contains(k)) args[k] = req[k];
    }
    Json ranks = req.value("ranks", Json::array());
    if (ranks.is_array() && rank < static_cast<int>(ranks.size())) {
      const Json& mine = ranks[static_cast<size_t>(rank)];
      if (mine.contains("env")) args["env"] = mine["env"];
      if (mine.contains("library_paths")) args["library_paths"] = mine["library_paths"];
      gpu = mine.value("gpu", local_rank);
    }
    args["nranks"] = size;
    args["rank_base"] = rank;
    args["gpus"] = {gpu};
  }

  Emit(rank, {{"type", "hello"},
              {"size", size},
              {"local_rank", local_rank},
              {"gpu", gpu},
              {"host", host}});
  PrintContext ctx(rank);
  auto outcome = [&](const std::string& o, const std::string& why, const std::string& step) {
    ctx.Result("outcome", {{"outcome", o}, {"reason", why}, {"step", step}});
  };
  if (rank == 0) {
    cc::Status st = error.empty() ? cc::agent::RunNccl(args, ctx) : cc::Status::BadArgument(error);
    if (!st.ok()) outcome("error", st.message(), "request");
    if (!ctx.sent()) {
      IdMessage m;
      std::string o = ctx.outcome().value("outcome", std::string("error"));
      std::string why = ctx.outcome().value("reason", std::string());
      std::snprintf(m.outcome, sizeof m.outcome, "%s", o.c_str());
      std::snprintf(m.reason, sizeof m.reason, "%s", why.c_str());
      Broadcast(&m);
    }
  } else {
    IdMessage m;
    Broadcast(&m);
    if (!m.have_id) {
      std::string o = m.outcome;
      // A skip (no GPU, no libnccl) stays one; anything else leaves this
      // rank with no communicator to join, which is an error here.
      outcome(o == "skip" ? "skip" : "error", std::string("rank 0 made no NCCL id: ") + m.reason,
              "rendezvous");
    } else if (!error.empty()) {
      outcome("error", error, "request");
    } else {
      args["unique_id"] = cc::agent::HexEncode(m.id, sizeof m.id);
      cc::Status st = cc::agent::RunNccl(args, ctx);
      if (!st.ok()) outcome("error", st.message(), "request");
    }
  }
  MPI_Finalize();
  return 0;
}
