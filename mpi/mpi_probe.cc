// clustercheck-mpi-probe: what the `mpi` stage runs under mpirun, one rank
// per node (orchestrator/stages/mpi/mpi_stage.cc). It
//   1. checks an MPI_Allreduce exactly (int64 sums, every element);
//   2. measures ping-pong latency (a small message) and bandwidth (a large
//      one, its data checked) for every rank pair, in the round-robin rounds
//      of the NCCL stage (probe_rounds.h): all pairs of a round at once.
// Every rank writes JSON lines on stdout as it goes (mpirun forwards them;
// the controller parses them with ParseMpiProbeOutput, orchestrator/
// mpi_output.h), so whatever was measured before a hang or an abort is kept:
//   {"type":"hello","rank":0,"size":4,"host":"node1","library":"Open MPI v4.1.4..."}
//   {"type":"allreduce","rank":0,"ok":true,"bytes":1048576,"mismatches":0,"us":812.5}
//   {"type":"pair","rank":0,"peer":1,"round":0,"ok":true,"latency_us":21.3,
//    "bandwidth_gbps":1.82,"lat_bytes":8,"bw_bytes":4194304,"iters":20}
//   {"type":"done","rank":0,"failures":0}
// A pair line comes from the lower rank; the higher one writes one only when
// its side failed. Nothing blocks without a deadline: every operation is
// non-blocking and polled against --timeout-s, so a dead link is reported
// ("no progress before the round's deadline") and the rounds go on with the
// other pairs. With any
// failure the job ends in MPI_Abort (MPI_Finalize could wait forever on the
// dead link) and exits non-zero.
//
// Options: --allreduce-bytes N (1M) --lat-bytes N (8) --bw-bytes N (4M)
//          --iters N (20) --warmup N (3) --timeout-s S (10)
//          --pairs 0-3,1-2 (one round of just these rank pairs instead of
//          every round: a burn-in round's pairing)
// C only: the C++ bindings would need libmpi_cxx, which MPI::MPI_C lacks.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "probe_rounds.h"  // beside this file: the probe links only MPI

namespace {

struct Options {
  long long allreduce_bytes = 1 << 20;
  long long lat_bytes = 8;
  long long bw_bytes = 4 << 20;
  int iters = 20;
  int warmup = 3;
  double timeout_s = 10;
  std::vector<std::pair<int, int>> pairs;  // --pairs: one round of these
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// One whole line per write, so mpirun's forwarding cannot interleave lines.
void Emit(const std::string& line) {
  std::string l = line + "\n";
  fwrite(l.data(), 1, l.size(), stdout);
  fflush(stdout);
}

bool ParseOptions(int argc, char** argv, Options* o, std::string* why) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      *why = "option " + a + " needs a value";
      return false;
    }
    char* end = nullptr;
    const char* v = argv[++i];
    if (a == "--pairs") {
      if (!cc::ParsePairList(v, &o->pairs, why)) return false;
      continue;
    }
    double d = std::strtod(v, &end);
    if (end == v || *end != '\0' || d <= 0) {
      if (!(a == "--warmup" && end != v && *end == '\0' && d == 0)) {
        *why = "bad value '" + std::string(v) + "' for " + a;
        return false;
      }
    }
    if (a == "--allreduce-bytes")
      o->allreduce_bytes = static_cast<long long>(d);
    else if (a == "--lat-bytes")
      o->lat_bytes = static_cast<long long>(d);
    else if (a == "--bw-bytes")
      o->bw_bytes = static_cast<long long>(d);
    else if (a == "--iters")
      o->iters = static_cast<int>(d);
    else if (a == "--warmup")
      o->warmup = static_cast<int>(d);
    else if (a == "--timeout-s")
      o->timeout_s = d;
    else {
      *why = "unknown option " + a;
      return false;
    }
  }
  return true;
}

// Polls the requests until all are complete or the deadline passes.
bool WaitAll(std::vector<MPI_Request>& reqs, double deadline) {
  for (;;) {
    int done = 0;
    MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE);
    if (done) return true;
    if (Now() > deadline) return false;
    sched_yield();
  }
}

std::string TimeoutText(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "timeout after %g s", s);
  return buf;
}

class Probe {
 public:
  Probe(const Options& o, MPI_Comm comm) : o_(o), comm_(comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }

  void Hello() {
    char host[MPI_MAX_PROCESSOR_NAME] = {0};
    int len = 0;
    MPI_Get_processor_name(host, &len);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {0};
    MPI_Get_library_version(lib, &len);
    std::string l(lib, strnlen(lib, sizeof lib));
    if (size_t nl = l.find('\n'); nl != std::string::npos) l.resize(nl);
    while (!l.empty() && (l.back() == ',' || l.back() == ' ')) l.pop_back();
    Emit("{\"type\":\"hello\",\"rank\":" + std::to_string(rank_) +
         ",\"size\":" + std::to_string(size_) + ",\"host\":" + JsonString(host) +
         ",\"pid\":" + std::to_string(getpid()) + ",\"library\":" + JsonString(l) + "}");
  }

  // Element i of rank r is (r + 1) * (i % 1009 + 1), so the sum over ranks
  // is n(n+1)/2 * (i % 1009 + 1): exact in int64, and a lost or doubled
  // contribution changes it.
  void Allreduce() {
    size_t count = static_cast<size_t>(o_.allreduce_bytes) / sizeof(int64_t);
    if (count == 0) count = 1;
    std::vector<int64_t> in(count), out(count, 0);
    for (size_t i = 0; i < count; ++i) in[i] = (rank_ + 1) * static_cast<int64_t>(i % 1009 + 1);
    std::vector<MPI_Request> req(1);
    double t0 = Now();
    MPI_Iallreduce(in.data(), out.data(), static_cast<int>(count), MPI_INT64_T, MPI_SUM, comm_,
                   &req[0]);
    std::string head = "{\"type\":\"allreduce\",\"rank\":" + std::to_string(rank_) +
                       ",\"bytes\":" + std::to_string(count * sizeof(int64_t));
    if (!WaitAll(req, t0 + o_.timeout_s)) {
      ++failures_;
      Emit(head + ",\"ok\":false,\"error\":" + JsonString(TimeoutText(o_.timeout_s)) + "}");
      return;
    }
    double us = (Now() - t0) * 1e6;
    const int64_t n = size_;
    long long bad = 0, first_bad = -1;
    for (size_t i = 0; i < count; ++i) {
      if (out[i] != n * (n + 1) / 2 * static_cast<int64_t>(i % 1009 + 1)) {
        if (bad++ == 0) first_bad = static_cast<long long>(i);
      }
    }
    if (bad) ++failures_;
    char buf[160];
    std::snprintf(buf, sizeof buf, ",\"ok\":%s,\"mismatches\":%lld,\"first_bad\":%lld,\"us\":%.1f}",
                  bad ? "false" : "true", bad, first_bad, us);
    Emit(head + buf);
  }

  // Round r must end by t0 + (r + 2) * timeout: a rank whose earlier pair
  // timed out reaches its next partner late, and a deadline counted from
  // the partner's own start would fail a healthy pair in its place. The
  // extra round absorbs the ranks' different t0 (an allreduce that timed
  // out on some ranks only).
  void Pairs() {
    auto rounds = o_.pairs.empty() ? cc::ProbeRounds(size_)
                                   : std::vector<std::vector<std::pair<int, int>>>{o_.pairs};
    const double t0 = Now();
    for (size_t r = 0; r < rounds.size(); ++r) {
      double deadline = t0 + static_cast<double>(r + 2) * o_.timeout_s;
      for (auto [a, b] : rounds[r]) {
        if (a == rank_) PingPong(static_cast<int>(r), b, true, deadline);
        if (b == rank_) PingPong(static_cast<int>(r), a, false, deadline);
      }
    }
  }

  bool PairsFit() const {
    for (auto [a, b] : o_.pairs) {
      if (b >= size_) return false;
    }
    return true;
  }

  void Done() {
    Emit("{\"type\":\"done\",\"rank\":" + std::to_string(rank_) +
         ",\"failures\":" + std::to_string(failures_) + "}");
  }

  // Whether any rank failed, agreed on with a deadline (a dead link can
  // keep the agreement from completing: that counts as a failure too).
  bool AnyFailed() {
    int mine = failures_, any = 0;
    std::vector<MPI_Request> req(1);
    MPI_Iallreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm_, &req[0]);
    if (!WaitAll(req, Now() + o_.timeout_s)) return true;
    return any != 0;
  }

 private:
  // `leader` sends first and reports; the other echoes. Each phase has its
  // own tags, so a message left over from a dead phase matches nothing.
  void PingPong(int round, int peer, bool leader, double deadline) {
    std::string error;
    double lat_us = 0, bw_gbps = 0;
    int tag = 16 + round * 4;
    double rtt = Measure(peer, leader, o_.lat_bytes, tag, deadline, &error);
    if (error.empty()) lat_us = rtt / 2 * 1e6;
    if (error.empty()) {
      rtt = Measure(peer, leader, o_.bw_bytes, tag + 2, deadline, &error);
      if (error.empty()) bw_gbps = o_.bw_bytes / (rtt / 2) / 1e9;
    }
    if (!error.empty()) ++failures_;
    if (!leader && error.empty()) return;
    std::string line = "{\"type\":\"pair\",\"rank\":" + std::to_string(rank_) +
                       ",\"peer\":" + std::to_string(peer) + ",\"round\":" + std::to_string(round) +
                       ",\"ok\":" + (error.empty() ? "true" : "false");
    if (error.empty()) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    ",\"latency_us\":%.2f,\"bandwidth_gbps\":%.4f,\"lat_bytes\":%lld,"
                    "\"bw_bytes\":%lld,\"iters\":%d}",
                    lat_us, bw_gbps, o_.lat_bytes, o_.bw_bytes, o_.iters);
      line += buf;
    } else {
      line += ",\"error\":" + JsonString(error) + "}";
    }
    Emit(line);
  }

  // Mean round-trip seconds over o_.iters after o_.warmup; the leader
  // checks the echoed bytes of the last trip.
  double Measure(int peer, bool leader, long long bytes, int tag, double deadline,
                 std::string* error) {
    std::vector<unsigned char> send(static_cast<size_t>(bytes)), recv(send.size());
    for (size_t i = 0; i < send.size(); ++i) {
      send[i] = static_cast<unsigned char>((i * 131 + rank_ * 7 + 1) & 0xff);
    }
    double t0 = 0;
    for (int it = 0; it < o_.warmup + o_.iters; ++it) {
      if (it == o_.warmup) t0 = Now();
      std::vector<MPI_Request> req(1);
      if (leader) {
        MPI_Isend(send.data(), static_cast<int>(bytes), MPI_BYTE, peer, tag, comm_, &req[0]);
        if (!WaitAll(req, deadline)) return Fail(error, "send", bytes);
        MPI_Irecv(recv.data(), static_cast<int>(bytes), MPI_BYTE, peer, tag + 1, comm_, &req[0]);
        if (!WaitAll(req, deadline)) return Fail(error, "reply", bytes);
      } else {
        MPI_Irecv(recv.data(), static_cast<int>(bytes), MPI_BYTE, peer, tag, comm_, &req[0]);
        if (!WaitAll(req, deadline)) return Fail(error, "receive", bytes);
        MPI_Isend(recv.data(), static_cast<int>(bytes), MPI_BYTE, peer, tag + 1, comm_, &req[0]);
        if (!WaitAll(req, deadline)) return Fail(error, "echo", bytes);
      }
    }
    double rtt = (Now() - t0) / o_.iters;
    if (leader && send != recv) {
      *error = "the echoed " + std::to_string(bytes) + " bytes differ from those sent";
    }
    return rtt;
  }

  double Fail(std::string* error, const char* what, long long bytes) {
    *error = std::string(what) + " of " + std::to_string(bytes) +
             " bytes: no progress before the round's deadline";
    return 0;
  }

  Options o_;
  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 0;
  int failures_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::string why;
  if (!ParseOptions(argc, argv, &o, &why)) {
    std::fprintf(stderr, "clustercheck-mpi-probe: %s\n", why.c_str());
    return 2;
  }
  MPI_Init(&argc, &argv);
  // COMM_WORLD itself, not a dup: MPI_Comm_dup is a blocking collective
  // that a dead link would hang. Our tags are ours alone.
  Probe p(o, MPI_COMM_WORLD);
  if (!p.PairsFit()) {
    std::fprintf(stderr, "clustercheck-mpi-probe: --pairs names a rank the job does not have\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
  p.Hello();
  p.Allreduce();
  p.Pairs();
  p.Done();
  if (p.AnyFailed()) {
    MPI_Abort(MPI_COMM_WORLD, 3);
    return 3;
  }
  MPI_Finalize();
  return 0;
}
