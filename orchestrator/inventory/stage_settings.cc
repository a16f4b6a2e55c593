#include "orchestrator/inventory/stage_settings.h"

#include <charconv>
#include <cmath>

namespace cc {

using Json = nlohmann::json;
using K = StageSettingKey;

const std::vector<std::string>& KnownStages() {
  static const std::vector<std::string> kStages = {"facts", "parity", "nics", "ports",
                                                   "nccl",  "mpi",    "sleep"};
  return kStages;
}

bool IsKnownStage(std::string_view stage) {
  for (const std::string& s : KnownStages()) {
    if (s == stage) return true;
  }
  return false;
}

// One row per setting. Timeouts have a small positive minimum so that 0
// ("no deadline") cannot sneak in: every blocking step has a deadline.
const std::vector<StageSettingKey>& StageSettingKeys() {
  static const std::vector<StageSettingKey> kKeys = {
      {"facts", "timeout_s", K::kFloat, 0.001, "deadline for collecting one node's facts"},

      {"parity", "ignore", K::kStringArray, 0, "fact names left out of the majority comparison"},

      {"nics", "mtu_probe", K::kBool, 0, "probe the path MTU between nodes with DF-set packets"},
      {"nics", "timeout_ms", K::kInt, 1, "deadline for one reachability probe"},
      {"nics", "senders_per_receiver", K::kInt, 1,
       "probes in flight per sender (default 8); each sender takes its peers in an "
       "order rotated by its own place, so a receiver is probed by about this many "
       "senders at once, whatever the cluster size"},
      {"nics", "port", K::kInt, 0,
       "port the agents listen on at every address, tcp and udp (default 29400; "
       "a free one where taken; 0: always a free one)"},

      {"ports", "ports", K::kPortList, 0,
       "ports every node must accept from every other (ints or \"lo-hi\")"},
      {"ports", "ephemeral_samples", K::kInt, 0, "how many ports of the ephemeral range to sample"},
      {"ports", "timeout_ms", K::kInt, 1, "a connect that takes longer counts as filtered"},
      {"ports", "parallel", K::kInt, 1, "connects in flight per node"},
      {"ports", "senders_per_receiver", K::kInt, 1,
       "senders probing one receiver at once, at most (default 8; fewer while connects slow)"},

      {"nccl", "sizes", K::kSizeList, 0, "message sizes: \"8-256M\" (doubling) or a list of sizes"},
      {"nccl", "iters", K::kInt, 1, "timed iterations per size"},
      {"nccl", "warmup", K::kInt, 0, "untimed iterations per size"},
      {"nccl", "timeout_s", K::kFloat, 0.001, "deadline for one test; a test past it is a hang"},
      {"nccl", "require_net", K::kString, 0, "transport NCCL must use between nodes, e.g. \"IB\""},
      {"nccl", "require_gdrdma", K::kBool, 0, "fail unless inter-node traffic uses GPUDirect RDMA"},
      {"nccl", "gpus_per_node", K::kInt, 1, "ranks per node (default: all GPUs)"},
      {"nccl", "launcher", K::kString, 0,
       "how ranks start: \"agent\" (default) or \"mpirun\" (id by MPI_Bcast)"},
      {"nccl", "env", K::kStringTable, 0, "extra environment for every rank"},
      {"nccl", "min_busbw_gbps", K::kFloat, 0,
       "a test below this busbw (GB/s, largest size) fails; 0 = no floor"},
      {"nccl", "outlier_fraction", K::kFloat, 0.001,
       "a pair below this fraction of the pairs' median busbw warns (0.8)"},
      {"nccl", "phases", K::kStringArray, 0,
       "phases to run: intra, pairs, cluster, isolate (default all)"},
      {"nccl", "isolate_max_tests", K::kInt, 1,
       "most NCCL tests the isolation may run (default 4 * nodes + 16)"},

      {"mpi", "mpirun", K::kString, 0, "path of Open MPI's mpirun (default: from PATH)"},
      {"mpi", "probe", K::kString, 0,
       "clustercheck-mpi-probe on the nodes, the same path on each "
       "(default: beside clustercheck)"},
      {"mpi", "timeout_s", K::kFloat, 0.001,
       "deadline for one mpirun; past it its process group is killed: hang"},
      {"mpi", "pair_timeout_s", K::kFloat, 0.001,
       "time per round of ping-pongs (and for the allreduce) inside the probe"},
      {"mpi", "message_size", K::kString, 0, "bandwidth ping-pong size, e.g. \"4M\""},
      {"mpi", "iters", K::kInt, 1, "timed ping-pong round trips per size"},
      {"mpi", "btl_tcp_if_include", K::kString, 0,
       "--mca btl_tcp_if_include (default: the nics stage's choice)"},
      {"mpi", "oob_tcp_if_include", K::kString, 0,
       "--mca oob_tcp_if_include (default: the nics stage's choice)"},
      {"mpi", "extra_args", K::kStringArray, 0, "added to mpirun's argv before the probe"},

      {"sleep", "seconds", K::kFloat, 0.001, "how long each agent stays busy"},
  };
  return kKeys;
}

const StageSettingKey* FindStageSettingKey(std::string_view stage, std::string_view key) {
  for (const StageSettingKey& k : StageSettingKeys()) {
    if (stage == k.stage && key == k.key) return &k;
  }
  return nullptr;
}

std::vector<std::string> StageSettingKeyNames(std::string_view stage) {
  std::vector<std::string> names;
  for (const StageSettingKey& k : StageSettingKeys()) {
    if (stage == k.stage) names.push_back(k.key);
  }
  return names;
}

namespace {

std::string FormatMin(double min) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, min);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(min);
}

// How a JSON value made from TOML reads in a message.
std::string JsonTypeName(const Json& v) {
  switch (v.type()) {
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a float";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "a table";
    default:
      return "a date or time";
  }
}

std::string Expected(const StageSettingKey& key, const Json& got) {
  return "expected " + DescribeStageSettingType(key) + ", got " + JsonTypeName(got);
}

std::string CheckPortItem(const Json& v) {
  if (v.is_number_integer()) {
    int64_t p = v.get<int64_t>();
    if (p < 1 || p > 65535) {
      return "port " + std::to_string(p) + " is outside 1..65535";
    }
    return "";
  }
  if (v.is_string()) {
    Result<std::pair<int, int>> r = ParsePortRange(v.get<std::string>());
    return r.ok() ? "" : r.status().message();
  }
  return "expected a port or a \"lo-hi\" range, got " + JsonTypeName(v);
}

std::string CheckSizeItem(const Json& v, bool allow_range) {
  if (v.is_number_integer()) {
    return v.get<int64_t>() >= 0 ? "" : "a size must not be negative";
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    Status st = allow_range ? ParseByteSizeRange(s).status() : ParseByteSize(s).status();
    return st.message();
  }
  return "expected a size (\"256M\" or 1024), got " + JsonTypeName(v);
}

// Checks every element of an array with `item`; names the index.
template <typename F>
std::string CheckEach(const Json& array, F item) {
  for (size_t i = 0; i < array.size(); ++i) {
    std::string why = item(array[i]);
    if (!why.empty()) return "[" + std::to_string(i) + "]: " + why;
  }
  return "";
}

}  // namespace

std::string DescribeStageSettingType(const StageSettingKey& key) {
  switch (key.type) {
    case K::kInt:
      return "an integer >= " + FormatMin(key.min);
    case K::kFloat:
      return "a number >= " + FormatMin(key.min);
    case K::kString:
      return "a string";
    case K::kBool:
      return "true or false";
    case K::kStringArray:
      return "an array of strings";
    case K::kPortList:
      return "an array of ports or \"lo-hi\" ranges";
    case K::kSizeList:
      return "a size range (\"8-256M\") or an array of sizes";
    case K::kStringTable:
      return "a table of strings";
  }
  return "?";
}

std::string CheckStageSetting(const StageSettingKey& key, const Json& value) {
  switch (key.type) {
    case K::kInt:
      if (!value.is_number_integer()) return Expected(key, value);
      if (static_cast<double>(value.get<int64_t>()) < key.min) {
        return "expected " + DescribeStageSettingType(key) + ", got " + value.dump();
      }
      return "";
    case K::kFloat: {
      if (!value.is_number()) return Expected(key, value);
      double d = value.get<double>();
      if (!std::isfinite(d) || d < key.min) {
        return "expected " + DescribeStageSettingType(key) + ", got " + FormatMin(d);
      }
      return "";
    }
    case K::kString:
      return value.is_string() ? "" : Expected(key, value);
    case K::kBool:
      return value.is_boolean() ? "" : Expected(key, value);
    case K::kStringArray:
      if (!value.is_array()) return Expected(key, value);
      return CheckEach(value, [&](const Json& v) {
        return v.is_string() ? "" : "expected a string, got " + JsonTypeName(v);
      });
    case K::kPortList:
      if (!value.is_array()) return Expected(key, value);
      return CheckEach(value, CheckPortItem);
    case K::kSizeList:
      if (value.is_string()) return CheckSizeItem(value, true);
      if (!value.is_array()) return Expected(key, value);
      return CheckEach(value, [](const Json& v) { return CheckSizeItem(v, false); });
    case K::kStringTable:
      if (!value.is_object()) return Expected(key, value);
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) {
          return k + ": expected a string, got " + JsonTypeName(v);
        }
      }
      return "";
  }
  return "unknown setting type";
}

namespace {

// Parses the decimal digits of `text` into `out`; false on junk/overflow.
bool ParseUint(std::string_view text, uint64_t& out) {
  if (text.empty()) return false;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

}  // namespace

Result<std::pair<int, int>> ParsePortRange(std::string_view text) {
  std::string_view lo_text = text, hi_text = text;
  size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    lo_text = text.substr(0, dash);
    hi_text = text.substr(dash + 1);
  }
  uint64_t lo = 0, hi = 0;
  if (!ParseUint(lo_text, lo) || !ParseUint(hi_text, hi)) {
    return Status::BadArgument("bad port range '" + std::string(text) +
                               "' (want \"29500\" or \"60000-60100\")");
  }
  if (lo < 1 || hi > 65535 || lo > hi) {
    return Status::BadArgument("bad port range '" + std::string(text) +
                               "' (ports are 1..65535, low before high)");
  }
  return std::make_pair(static_cast<int>(lo), static_cast<int>(hi));
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  uint64_t scale = 1;
  std::string_view digits = text;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k':
        scale = 1ULL << 10;
        break;
      case 'M':
      case 'm':
        scale = 1ULL << 20;
        break;
      case 'G':
      case 'g':
        scale = 1ULL << 30;
        break;
      default:
        break;
    }
    if (scale != 1) digits.remove_suffix(1);
  }
  uint64_t n = 0;
  // 2^40 bytes is far beyond any collective anyone times.
  if (!ParseUint(digits, n) || n > (1ULL << 40) / scale) {
    return Status::BadArgument("bad size '" + std::string(text) + "' (want e.g. 8, 64K, 256M, 1G)");
  }
  return n * scale;
}

Result<std::pair<uint64_t, uint64_t>> ParseByteSizeRange(std::string_view text) {
  size_t dash = text.find('-');
  if (dash == std::string_view::npos) {
    Result<uint64_t> n = ParseByteSize(text);
    if (!n.ok()) return n.status();
    return std::make_pair(*n, *n);
  }
  Result<uint64_t> lo = ParseByteSize(text.substr(0, dash));
  if (!lo.ok()) return lo.status();
  Result<uint64_t> hi = ParseByteSize(text.substr(dash + 1));
  if (!hi.ok()) return hi.status();
  if (*lo > *hi) {
    return Status::BadArgument("size range '" + std::string(text) + "' is reversed");
  }
  return std::make_pair(*lo, *hi);
}

}  // namespace cc
