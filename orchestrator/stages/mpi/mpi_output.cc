#include "orchestrator/stages/mpi/mpi_output.h"

#include <cctype>
#include <cstring>

#include "orchestrator/transport/slurm_steps.h"

namespace cc {
namespace {

using Json = nlohmann::json;

// Reads `key` of type T into *v; false (and a reason) when it is there
// with another type or missing while `required`.
template <typename T>
bool Field(const Json& j, const char* key, T* v, bool required, std::string* why) {
  auto it = j.find(key);
  if (it == j.end()) {
    if (required) *why = std::string("no \"") + key + "\"";
    return !required;
  }
  try {
    *v = it->get<T>();
    return true;
  } catch (const Json::exception&) {
    *why = std::string("\"") + key + "\" has the wrong type";
    return false;
  }
}

bool Parse(const Json& j, const std::string& type, MpiProbeOutput* out, std::string* why) {
  int rank = -1;
  if (!Field(j, "rank", &rank, true, why)) return false;
  if (rank < 0) {
    *why = "negative rank";
    return false;
  }
  if (type == "hello") {
    MpiHello h;
    h.rank = rank;
    if (!Field(j, "size", &h.size, true, why) || !Field(j, "host", &h.host, false, why) ||
        !Field(j, "library", &h.library, false, why)) {
      return false;
    }
    out->hellos[rank] = h;
  } else if (type == "allreduce") {
    MpiAllreduceLine a;
    a.rank = rank;
    if (!Field(j, "ok", &a.ok, true, why) || !Field(j, "bytes", &a.bytes, false, why) ||
        !Field(j, "mismatches", &a.mismatches, false, why) || !Field(j, "us", &a.us, false, why) ||
        !Field(j, "error", &a.error, false, why)) {
      return false;
    }
    out->allreduce[rank] = a;
  } else if (type == "pair") {
    MpiPairLine p;
    p.rank = rank;
    if (!Field(j, "peer", &p.peer, true, why) || !Field(j, "round", &p.round, false, why) ||
        !Field(j, "ok", &p.ok, true, why) || !Field(j, "latency_us", &p.latency_us, false, why) ||
        !Field(j, "bandwidth_gbps", &p.bandwidth_gbps, false, why) ||
        !Field(j, "lat_bytes", &p.lat_bytes, false, why) ||
        !Field(j, "bw_bytes", &p.bw_bytes, false, why) ||
        !Field(j, "iters", &p.iters, false, why) || !Field(j, "error", &p.error, false, why)) {
      return false;
    }
    if (p.peer < 0 || p.peer == rank) {
      *why = "bad peer";
      return false;
    }
    out->pairs.push_back(p);
  } else {  // done
    int failures = 0;
    if (!Field(j, "failures", &failures, true, why)) return false;
    out->done[rank] = failures;
  }
  return true;
}

}  // namespace

std::string StripMpiOutputTag(const std::string& line, int* rank) {
  if (rank) *rank = -1;
  // [job,rank]<stdout>: or <stderr>: (Open MPI 4's --tag-output)
  if (line.empty() || line[0] != '[') return line;
  size_t comma = line.find(',');
  size_t close = line.find(']');
  if (comma == std::string::npos || close == std::string::npos || comma > close) return line;
  auto digits = [&](size_t b, size_t e) {
    if (b >= e) return false;
    for (size_t i = b; i < e; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(line[i]))) return false;
    }
    return true;
  };
  if (!digits(1, comma) || !digits(comma + 1, close) || close - comma > 10) return line;
  for (const char* stream : {"<stdout>:", "<stderr>:", "<stddiag>:"}) {
    const size_t len = std::strlen(stream);
    if (line.size() >= close + 1 + len && line.compare(close + 1, len, stream) == 0) {
      if (rank) *rank = std::stoi(line.substr(comma + 1, close - comma - 1));
      return line.substr(close + 1 + len);
    }
  }
  return line;
}

void AddMpiProbeLine(const std::string& line, MpiProbeOutput* out) {
  int tag_rank = -1;
  std::string text = StripMpiOutputTag(line, &tag_rank);
  if (tag_rank < 0) text = StripSrunLabel(text, &tag_rank);  // a Slurm step's line
  while (!text.empty() && (text.back() == '\r' || text.back() == ' ')) text.pop_back();
  if (text.empty()) return;
  Json j;
  if (text[0] == '{') j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  std::string type = j.is_object() ? j.value("type", std::string()) : std::string();
  if (type != "hello" && type != "allreduce" && type != "pair" && type != "done") {
    out->other.push_back(text);
    return;
  }
  std::string why;
  auto rank = j.find("rank");
  if (tag_rank >= 0 && rank != j.end() && rank->is_number_integer() &&
      rank->get<int>() != tag_rank) {
    why = "written by rank " + std::to_string(tag_rank) + " but says rank " + rank->dump();
  } else if (Parse(j, type, out, &why)) {
    return;
  }
  out->problems.push_back(type + " line '" + text.substr(0, 200) + "': " + why);
}

MpiProbeOutput ParseMpiProbeOutput(const std::vector<std::string>& lines) {
  MpiProbeOutput out;
  for (const std::string& l : lines) AddMpiProbeLine(l, &out);
  return out;
}

const MpiPairLine* FindMpiPair(const MpiProbeOutput& out, int a, int b) {
  const MpiPairLine* second = nullptr;
  for (const MpiPairLine& p : out.pairs) {
    if (p.rank == a && p.peer == b) return &p;
    if (p.rank == b && p.peer == a && !second) second = &p;
  }
  return second;
}

MpiPairIndex::MpiPairIndex(const MpiProbeOutput& out, int ranks)
    : out_(&out), ranks_(ranks), first_(static_cast<size_t>(ranks) * ranks, 0) {
  for (size_t i = 0; i < out.pairs.size(); ++i) {
    const MpiPairLine& p = out.pairs[i];
    // A line naming no rank of the job matches no pair (FindMpiPair's
    // a and b are ranks).
    if (p.rank < 0 || p.rank >= ranks || p.peer < 0 || p.peer >= ranks) continue;
    uint32_t& slot = first_[static_cast<size_t>(p.rank) * ranks + p.peer];
    if (slot == 0) slot = static_cast<uint32_t>(i + 1);
  }
}

const MpiPairLine* MpiPairIndex::At(int rank, int peer) const {
  if (rank < 0 || rank >= ranks_ || peer < 0 || peer >= ranks_) return nullptr;
  uint32_t slot = first_[static_cast<size_t>(rank) * ranks_ + peer];
  return slot == 0 ? nullptr : &out_->pairs[slot - 1];
}

const MpiPairLine* MpiPairIndex::Find(int a, int b) const {
  const MpiPairLine* mine = At(a, b);
  return mine ? mine : At(b, a);
}

}  // namespace cc
