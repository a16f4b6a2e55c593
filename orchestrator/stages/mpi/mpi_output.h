// What clustercheck-mpi-probe (mpi/mpi_probe.cc) printed under mpirun:
// its JSON lines, per rank, and everything else (Open MPI's own messages,
// which the stage quotes when it explains a failure). Pure.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace cc {

struct MpiHello {
  int rank = -1;
  int size = 0;
  std::string host;     // MPI_Get_processor_name
  std::string library;  // MPI_Get_library_version, first line
};

struct MpiAllreduceLine {
  int rank = -1;
  bool ok = false;
  long long bytes = 0;
  long long mismatches = 0;
  double us = 0;
  std::string error;  // "timeout after 10 s" when !ok and nothing arrived
};

struct MpiPairLine {
  int rank = -1;  // who wrote it
  int peer = -1;
  int round = -1;
  bool ok = false;
  double latency_us = 0;      // half the mean round trip of lat_bytes
  double bandwidth_gbps = 0;  // bw_bytes / half the mean round trip, 1e9 B/s
  long long lat_bytes = 0;
  long long bw_bytes = 0;
  int iters = 0;
  std::string error;
};

struct MpiProbeOutput {
  std::map<int, MpiHello> hellos;  // by rank
  std::map<int, MpiAllreduceLine> allreduce;
  std::vector<MpiPairLine> pairs;  // in the order they came
  std::map<int, int> done;         // rank -> its failure count
  // Lines that are not the probe's (Open MPI's messages, ssh's errors),
  // without mpirun's --tag-output prefix, in order.
  std::vector<std::string> other;
  // Probe lines that did not parse, with why ("line 3: ...").
  std::vector<std::string> problems;
};

// "[1,2]<stdout>:text" (mpirun --tag-output) -> "text", rank 2 in *rank
// when given; any other line is returned as it is and *rank is -1.
std::string StripMpiOutputTag(const std::string& line, int* rank = nullptr);

// Adds one line of mpirun's stdout or stderr. A line whose text starts with
// '{' and has "type" of hello/allreduce/pair/done is the probe's; anything
// else goes to `other`. A probe line whose rank disagrees with its tag, or
// whose fields have the wrong types, goes to `problems`.
void AddMpiProbeLine(const std::string& line, MpiProbeOutput* out);
MpiProbeOutput ParseMpiProbeOutput(const std::vector<std::string>& lines);

// The line of the pair of ranks a < b: the one a wrote, else b's (a
// failure on b's side); nullptr when neither wrote.
const MpiPairLine* FindMpiPair(const MpiProbeOutput& out, int a, int b);

// FindMpiPair for every pair of a job of `ranks` ranks without a scan of
// all lines each time (at 256 ranks, 65,280 lines for 32,640 pairs): the
// first line of each (rank, peer). Holds pointers into `out`, which must
// outlive it unchanged.
class MpiPairIndex {
 public:
  MpiPairIndex(const MpiProbeOutput& out, int ranks);
  // As FindMpiPair(out, a, b).
  const MpiPairLine* Find(int a, int b) const;

 private:
  const MpiPairLine* At(int rank, int peer) const;
  const MpiProbeOutput* out_;
  int ranks_;
  std::vector<uint32_t> first_;  // [rank * ranks + peer]: line index + 1, 0 = none
};

}  // namespace cc
