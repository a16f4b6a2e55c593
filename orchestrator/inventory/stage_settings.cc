#include "orchestrator/inventory/stage_settings.h"

#include <charconv>
#include <cmath>

namespace cc {

using Json = nlohmann::json;
using K = StageSettingKey;

bool IsKnownStage(std::string_view stage) {
  for (const std::string& s : KnownStages()) {
    if (s == stage) return true;
  }
  return false;
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
