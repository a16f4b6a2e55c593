#include "orchestrator/run/schedule.h"

#include <cctype>
#include <limits>

namespace cc {
namespace {

constexpr uint64_t kMaxSize = uint64_t{1} << 50;  // far past any GPU's memory

Status Bad(const std::string& spec, const std::string& why) {
  return Status::BadArgument("size spec '" + spec + "': " + why);
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

Result<uint64_t> ParseOneSize(const std::string& spec, const std::string& raw) {
  std::string t = Trim(raw);
  size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 0) return Bad(spec, "'" + raw + "' is not a size (digits first)");
  if (i > 15) return Bad(spec, "'" + raw + "' is too large");
  uint64_t n = std::stoull(t.substr(0, i));
  std::string suffix = t.substr(i);
  for (auto& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!suffix.empty() && std::string("KMGT").find(suffix[0]) != std::string::npos) {
    shift = 10 * (1 + static_cast<int>(std::string("KMGT").find(suffix[0])));
    suffix.erase(0, 1);
    if (suffix == "IB") suffix = "B";
  }
  if (!suffix.empty() && suffix != "B") {
    return Bad(spec, "'" + raw + "' has an unknown suffix (use K, M, G, T: 1024-based)");
  }
  if (n == 0) return Bad(spec, "'" + raw + "' is zero");
  if (n > (kMaxSize >> shift)) return Bad(spec, "'" + raw + "' is too large");
  return n << shift;
}

Result<std::vector<uint64_t>> ParseRange(const std::string& spec, size_t dash) {
  auto lo = ParseOneSize(spec, spec.substr(0, dash));
  if (!lo.ok()) return lo.status();
  auto hi = ParseOneSize(spec, spec.substr(dash + 1));
  if (!hi.ok()) return hi.status();
  if (*lo > *hi) return Bad(spec, "the range is reversed");
  std::vector<uint64_t> out;
  for (uint64_t s = *lo; s <= *hi; s *= 2) {
    if (out.size() == kMaxSizes)
      return Bad(spec, "more than " + std::to_string(kMaxSizes) + " sizes");
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::vector<Round> RoundRobinRounds(const std::vector<std::string>& nodes) {
  std::vector<Round> rounds;
  if (nodes.size() < 2) return rounds;
  // Indices into nodes; -1 is the bye.
  std::vector<int> ring;
  for (size_t i = 0; i < nodes.size(); ++i) ring.push_back(static_cast<int>(i));
  if (ring.size() % 2 == 1) ring.push_back(-1);
  const size_t m = ring.size();
  for (size_t r = 0; r + 1 < m; ++r) {
    Round round;
    for (size_t i = 0; i < m / 2; ++i) {
      int a = ring[i], b = ring[m - 1 - i];
      if (a < 0 || b < 0) continue;
      if (a > b) std::swap(a, b);  // pairs read in inventory order
      round.emplace_back(nodes[a], nodes[b]);
    }
    rounds.push_back(std::move(round));
    // Keep ring[0] fixed; rotate the rest one place to the right.
    int last = ring[m - 1];
    for (size_t i = m - 1; i > 1; --i) ring[i] = ring[i - 1];
    ring[1] = last;
  }
  return rounds;
}

std::string FormatSize(uint64_t bytes) {
  static const char kSuffix[] = "TGMK";
  for (int i = 0; i < 4; ++i) {
    int shift = 10 * (4 - i);
    uint64_t unit = uint64_t{1} << shift;
    if (bytes != 0 && bytes % unit == 0) {
      return std::to_string(bytes >> shift) + kSuffix[i];
    }
  }
  return std::to_string(bytes);
}

Result<std::vector<uint64_t>> ParseSizes(const std::string& raw) {
  std::string spec = Trim(raw);
  if (spec.empty()) return Bad(raw, "empty");
  if (spec[0] == '[') {
    nlohmann::json j = nlohmann::json::parse(spec, nullptr, false);
    if (j.is_discarded()) return Bad(spec, "not a valid JSON array");
    return ParseSizesJson(j);
  }
  if (spec.find(',') != std::string::npos) {
    std::vector<uint64_t> out;
    size_t pos = 0;
    while (pos <= spec.size()) {
      size_t comma = spec.find(',', pos);
      if (comma == std::string::npos) comma = spec.size();
      auto one = ParseOneSize(spec, spec.substr(pos, comma - pos));
      if (!one.ok()) return one.status();
      if (out.size() == kMaxSizes)
        return Bad(spec, "more than " + std::to_string(kMaxSizes) + " sizes");
      out.push_back(*one);
      pos = comma + 1;
    }
    return out;
  }
  size_t dash = spec.find('-');
  if (dash != std::string::npos) return ParseRange(spec, dash);
  auto one = ParseOneSize(spec, spec);
  if (!one.ok()) return one.status();
  return std::vector<uint64_t>{*one};
}

Result<std::vector<uint64_t>> ParseSizesJson(const nlohmann::json& value) {
  const std::string shown = value.dump();
  auto one = [&](const nlohmann::json& v) -> Result<uint64_t> {
    // JSON integers may be stored signed or unsigned; both count.
    if (v.is_number_integer() && v.get<int64_t>() > 0 && v.get<uint64_t>() <= kMaxSize) {
      return v.get<uint64_t>();
    }
    if (v.is_string()) return ParseOneSize(shown, v.get<std::string>());
    return Bad(shown, v.dump() + " is not a positive size");
  };
  if (value.is_string()) return ParseSizes(value.get<std::string>());
  if (!value.is_array()) {
    auto s = one(value);
    if (!s.ok()) return s.status();
    return std::vector<uint64_t>{*s};
  }
  if (value.empty()) return Bad(shown, "empty");
  if (value.size() > kMaxSizes)
    return Bad(shown, "more than " + std::to_string(kMaxSizes) + " sizes");
  std::vector<uint64_t> out;
  for (const auto& v : value) {
    auto s = one(v);
    if (!s.ok()) return s.status();
    out.push_back(*s);
  }
  return out;
}

}  // namespace cc
