#include "agent/nccl_request.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace cc::agent {
namespace {

using nlohmann::json;

// Hours of burn-in at small sizes; the bound only keeps a typo from
// asking for years.
constexpr int kMaxCheckIters = 10000000;

Status Bad(const std::string& field, const std::string& why) {
  return Status::BadArgument("nccl: args." + field + " " + why);
}

// An integer field within [lo, hi]; `fallback` when absent.
Status IntField(const json& args, const char* name, int lo, int hi, int* out) {
  if (!args.contains(name)) return Status::Ok();
  const json& v = args[name];
  if (!v.is_number_integer()) return Bad(name, "must be an integer, got " + v.dump());
  int64_t x = v.get<int64_t>();
  if (x < lo || x > hi) {
    return Bad(name, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                         std::to_string(x));
  }
  *out = static_cast<int>(x);
  return Status::Ok();
}

Status ParseGpus(const json& args, NcclRequest* r) {
  if (!args.contains("gpus")) return Status::Ok();
  const json& g = args["gpus"];
  if (!g.is_array() || g.empty()) return Bad("gpus", "must be a non-empty array of device indices");
  r->gpus.clear();
  std::set<int> seen;
  for (const auto& d : g) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0 || d.get<int64_t>() > 1023) {
      return Bad("gpus", "has a bad device index " + d.dump());
    }
    int i = d.get<int>();
    // One rank per GPU per process: NCCL refuses a GPU twice in a comm.
    if (!seen.insert(i).second) return Bad("gpus", "names GPU " + std::to_string(i) + " twice");
    r->gpus.push_back(i);
  }
  return Status::Ok();
}

Status ParseSizeList(const json& args, NcclRequest* r) {
  if (!args.contains("sizes")) return Status::Ok();
  const json& s = args["sizes"];
  if (!s.is_array() || s.empty()) return Bad("sizes", "must be a non-empty array of byte counts");
  if (s.size() > 64) return Bad("sizes", "has more than 64 sizes");
  r->sizes.clear();
  for (const auto& v : s) {
    if (!v.is_number_integer() || v.get<int64_t>() <= 0) {
      return Bad("sizes", "has " + v.dump() + ": sizes are positive byte counts");
    }
    uint64_t b = v.get<uint64_t>();
    if (b % 4 != 0) return Bad("sizes", "has " + v.dump() + ": not a multiple of 4 (float data)");
    if (b > kMaxNcclBytes) return Bad("sizes", "has " + v.dump() + ": above 16G per buffer");
    r->sizes.push_back(b);
  }
  return Status::Ok();
}

Status ParseDtypes(const json& args, NcclRequest* r) {
  if (!args.contains("dtypes")) return Status::Ok();
  const json& d = args["dtypes"];
  if (!d.is_array() || d.empty()) return Bad("dtypes", "must be a non-empty array of type names");
  r->dtypes.clear();
  for (const auto& v : d) {
    std::optional<NcclDtype> t =
        v.is_string() ? ParseNcclDtype(v.get<std::string>()) : std::nullopt;
    if (!t) return Bad("dtypes", "has " + v.dump() + ": known are \"float\", \"half\", \"bf16\"");
    if (std::find(r->dtypes.begin(), r->dtypes.end(), *t) != r->dtypes.end()) {
      return Bad("dtypes", "names " + v.dump() + " twice");
    }
    r->dtypes.push_back(*t);
  }
  return Status::Ok();
}

bool EnvNameOk(const std::string& k) {
  if (k.rfind("NCCL_", 0) != 0 && k.rfind("CUDA_", 0) != 0) return false;
  return std::all_of(k.begin(), k.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

Status ParseEnv(const json& args, NcclRequest* r) {
  if (!args.contains("env")) return Status::Ok();
  const json& e = args["env"];
  if (!e.is_object()) return Bad("env", "must be an object of NAME: value");
  for (const auto& [k, v] : e.items()) {
    if (!EnvNameOk(k)) return Bad("env", "has '" + k + "': only NCCL_* and CUDA_* may be set");
    std::string value;
    if (v.is_string()) {
      value = v.get<std::string>();
    } else if (v.is_number_integer() || v.is_boolean()) {
      value = v.is_boolean() ? (v.get<bool>() ? "1" : "0") : std::to_string(v.get<int64_t>());
    } else {
      return Bad("env." + k, "must be a string or an integer, got " + v.dump());
    }
    if (value.find('\0') != std::string::npos) return Bad("env." + k, "has a NUL byte");
    r->env.emplace_back(k, value);
  }
  return Status::Ok();
}

Status ParsePaths(const json& args, NcclRequest* r) {
  if (!args.contains("library_paths")) return Status::Ok();
  const json& p = args["library_paths"];
  if (!p.is_array()) return Bad("library_paths", "must be an array of directories or files");
  for (const auto& d : p) {
    if (!d.is_string()) return Bad("library_paths", "has " + d.dump() + ": not a string");
    r->library_paths.push_back(d.get<std::string>());
  }
  return Status::Ok();
}

}  // namespace

Result<NcclRequest> ParseNcclRequest(const json& args) {
  if (!args.is_object()) return Status::BadArgument("nccl: args must be an object");
  NcclRequest r;
  if (!args.contains("nranks")) return Bad("nranks", "is required");
  for (Status s :
       {IntField(args, "nranks", 1, kMaxExactRanks, &r.nranks),
        IntField(args, "rank_base", 0, kMaxExactRanks - 1, &r.rank_base),
        IntField(args, "iters", 1, 100000, &r.iters),
        IntField(args, "warmup", 0, 100000, &r.warmup),
        IntField(args, "check_iters", 0, kMaxCheckIters, &r.check_iters), ParseGpus(args, &r),
        ParseSizeList(args, &r), ParseDtypes(args, &r), ParseEnv(args, &r), ParsePaths(args, &r)}) {
    if (!s.ok()) return s;
  }
  if (r.rank_base + static_cast<int>(r.gpus.size()) > r.nranks) {
    return Bad("rank_base", "+ " + std::to_string(r.gpus.size()) + " GPUs exceeds nranks " +
                                std::to_string(r.nranks));
  }
  if (args.contains("timeout_s")) {
    const json& t = args["timeout_s"];
    if (!t.is_number() || !(t.get<double>() > 0) || !std::isfinite(t.get<double>())) {
      return Bad("timeout_s", "must be a positive number of seconds, got " + t.dump());
    }
    r.timeout_s = t.get<double>();
  }
  if (args.contains("unique_id") && !args["unique_id"].is_null()) {
    const json& u = args["unique_id"];
    if (!u.is_string()) return Bad("unique_id", "must be a hex string");
    auto bytes = HexDecode(u.get<std::string>(), kNcclUniqueIdBytes);
    if (!bytes.ok()) return bytes.status().WithContext("nccl: args.unique_id");
    r.unique_id_hex = u.get<std::string>();
  } else if (r.rank_base != 0) {
    // The id carries the address of a listener in the process that made it:
    // only the process holding rank 0 may create it.
    return Bad("unique_id", "is required unless this process holds rank 0 (rank_base 0)");
  }
  return r;
}

std::string HexEncode(const void* data, size_t n) {
  static const char kDigits[] = "0123456789abcdef";
  const auto* p = static_cast<const uint8_t*>(data);
  std::string out;
  out.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(kDigits[p[i] >> 4]);
    out.push_back(kDigits[p[i] & 15]);
  }
  return out;
}

Result<std::vector<uint8_t>> HexDecode(const std::string& hex, size_t bytes) {
  if (hex.size() != 2 * bytes) {
    return Status::BadArgument("expected " + std::to_string(2 * bytes) + " hex digits, got " +
                               std::to_string(hex.size()));
  }
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<uint8_t> out(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return Status::BadArgument("not a hex digit at position " +
                                 std::to_string(hi < 0 ? 2 * i : 2 * i + 1));
    }
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return out;
}

size_t CountMismatches(const float* got, size_t count, size_t first_index, int nranks,
                       size_t* first_bad) {
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) {
    // Exact comparison on purpose: every value is a small integer.
    if (got[i] != NcclExpectedSum(nranks, first_index + i)) {
      if (bad == 0 && first_bad) *first_bad = first_index + i;
      ++bad;
    }
  }
  return bad;
}

std::vector<std::pair<std::string, std::string>> NcclEnvironment(const NcclRequest& request,
                                                                 const std::string& log_dir) {
  std::vector<std::pair<std::string, std::string>> env;
  std::string subsys;
  for (const auto& [k, v] : request.env) {
    if (k == "NCCL_DEBUG_SUBSYS") {
      subsys = v;
    } else if (k != "NCCL_DEBUG" && k != "NCCL_DEBUG_FILE" && k != "NCCL_COMM_BLOCKING") {
      env.emplace_back(k, v);
    }
  }
  // The controller parses the transport from INIT and NET lines; whatever
  // else was asked for is kept. A leading '^' would exclude: start over.
  if (subsys.empty() || subsys[0] == '^') subsys = "INIT,NET";
  for (const char* need : {"INIT", "NET"}) {
    std::string padded = "," + subsys + ",";
    if (padded.find(std::string(",") + need + ",") == std::string::npos &&
        padded.find(",ALL,") == std::string::npos) {
      subsys += std::string(",") + need;
    }
  }
  // NCCL_COMM_BLOCKING=1 would override the non-blocking config, and a
  // blocking init cannot be aborted at its deadline.
  env.emplace_back("NCCL_COMM_BLOCKING", "0");
  env.emplace_back("NCCL_DEBUG", "INFO");
  env.emplace_back("NCCL_DEBUG_SUBSYS", subsys);
  env.emplace_back("NCCL_DEBUG_FILE", log_dir + "/nccl-%h-%p.log");
  return env;
}

std::vector<std::string> LibraryPathsFor(const std::vector<std::string>& paths,
                                         const std::string& lib) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::string base = p.substr(p.find_last_of('/') + 1);
    bool names_a_library = base.find(".so") != std::string::npos;
    if (!names_a_library || base.rfind(lib, 0) == 0) out.push_back(p);
  }
  return out;
}

std::string CapLog(const std::string& text, size_t cap) {
  if (text.size() <= cap) return text;
  std::string marker = "\n[clustercheck: " + std::to_string(text.size()) +
                       " bytes of NCCL log, middle cut to fit " + std::to_string(cap) + "]\n";
  if (cap <= marker.size()) return text.substr(0, cap);
  size_t room = cap - marker.size();
  size_t head = room * 3 / 4;
  size_t tail = room - head;
  return text.substr(0, head) + marker + text.substr(text.size() - tail);
}

}  // namespace cc::agent
