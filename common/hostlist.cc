#include "common/hostlist.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

namespace cc {
namespace {

// Numbers above this are refused: with 18 digits every product and sum
// below stays inside uint64_t, and no real hostname needs more.
constexpr uint64_t kMaxNumber = 999999999999999999ULL;
// DNS allows 253 characters in a name; a longer one is a mistake.
constexpr size_t kMaxNameLength = 255;

// Characters a host name may contain outside brackets. Hostnames proper
// need only letters, digits, '-' and '.'; '_' and ':' (IPv6 literals) and
// '%' (zone ids) are seen in the field; everything else (spaces, quotes,
// shell metacharacters) is a typo worth reporting.
bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == ':' || c == '%';
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string Describe(char c) {
  if (c >= 0x20 && c <= 0x7e) return std::string("'") + c + "'";
  static const char kHex[] = "0123456789abcdef";
  unsigned char u = static_cast<unsigned char>(c);
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

Status Bad(size_t pos, const std::string& what) {
  return Status::BadArgument(what + " at position " + std::to_string(pos + 1));
}

struct Range {
  uint64_t lo = 0, hi = 0;
  size_t width = 0;  // zero-padded width, 0 = natural
};

// One piece of a host pattern: literal text, or a bracket set of ranges.
struct Piece {
  std::string literal;
  std::vector<Range> ranges;  // empty for a literal
  uint64_t Count() const {
    if (ranges.empty()) return 1;
    // Saturates just above the limit so that sums cannot overflow.
    uint64_t n = 0;
    for (const Range& r : ranges) {
      n += std::min<uint64_t>(r.hi - r.lo + 1, kMaxHostlistSize + 1);
      if (n > kMaxHostlistSize) return kMaxHostlistSize + 1;
    }
    return n;
  }
};

// Parses a decimal number starting at `pos` in `s`; advances `pos`.
Result<uint64_t> ParseNumber(const std::string& s, size_t& pos, std::string& digits) {
  size_t start = pos;
  while (pos < s.size() && IsDigit(s[pos])) ++pos;
  digits = s.substr(start, pos - start);
  if (digits.empty()) {
    if (pos >= s.size()) return Bad(pos, "missing number");
    return Bad(pos, "expected a digit, got " + Describe(s[pos]));
  }
  uint64_t v = 0;
  for (char c : digits) {
    if (v > kMaxNumber / 10) {
      return Bad(start, "number " + digits + " is too large");
    }
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v > kMaxNumber) return Bad(start, "number " + digits + " is too large");
  return v;
}

// Parses "1-3,7,010-012" up to the closing ']' (pos starts after '[').
Result<std::vector<Range>> ParseBracket(const std::string& s, size_t& pos) {
  size_t open = pos - 1;
  std::vector<Range> ranges;
  while (true) {
    if (pos >= s.size()) return Bad(open, "unclosed '['");
    if (s[pos] == ']') {
      return Bad(pos, ranges.empty() ? "empty range '[]'" : "empty range");
    }
    size_t start = pos;
    std::string lo_digits, hi_digits;
    Result<uint64_t> lo = ParseNumber(s, pos, lo_digits);
    if (!lo.ok()) return lo.status();
    Range r{*lo, *lo, 0};
    if (lo_digits.size() > 1 && lo_digits[0] == '0') r.width = lo_digits.size();
    if (pos < s.size() && s[pos] == '-') {
      ++pos;
      Result<uint64_t> hi = ParseNumber(s, pos, hi_digits);
      if (!hi.ok()) return hi.status();
      r.hi = *hi;
      if (r.hi < r.lo) {
        return Bad(start, "range " + lo_digits + "-" + hi_digits + " is reversed");
      }
    }
    ranges.push_back(r);
    if (pos >= s.size()) return Bad(open, "unclosed '['");
    if (s[pos] == ']') {
      ++pos;
      return ranges;
    }
    if (s[pos] != ',') {
      return Bad(pos, "expected ',' or ']' in range, got " + Describe(s[pos]));
    }
    ++pos;
  }
}

// Parses one comma-free host pattern s[begin, end).
// Bounding the length of the longest name it expands to also bounds the
// number of pieces, hence the recursion depth of Expand, and stops early
// on a megabyte of "[1][1]...".
Result<std::vector<Piece>> ParsePattern(const std::string& s, size_t begin, size_t end) {
  std::vector<Piece> pieces;
  size_t pos = begin;
  size_t longest = 0;
  while (pos < end) {
    if (longest > kMaxNameLength) {
      return Bad(begin, "host name longer than " + std::to_string(kMaxNameLength) + " characters");
    }
    char c = s[pos];
    if (c == '[') {
      ++pos;
      Result<std::vector<Range>> ranges = ParseBracket(s, pos);
      if (!ranges.ok()) return ranges.status();
      size_t widest = 0;
      for (const Range& r : *ranges) {
        widest = std::max({widest, r.width, std::to_string(r.hi).size()});
      }
      longest += widest;
      pieces.push_back(Piece{"", std::move(*ranges)});
    } else if (c == ']') {
      return Bad(pos, "unbalanced ']'");
    } else if (IsNameChar(c)) {
      if (pieces.empty() || !pieces.back().ranges.empty()) pieces.emplace_back();
      pieces.back().literal += c;
      ++longest;
      ++pos;
    } else {
      return Bad(pos, "unexpected " + Describe(c) + " in host name");
    }
  }
  if (longest > kMaxNameLength) {
    return Bad(begin, "host name longer than " + std::to_string(kMaxNameLength) + " characters");
  }
  return pieces;
}

std::string Pad(uint64_t v, size_t width) {
  std::string d = std::to_string(v);
  if (d.size() < width) d.insert(0, width - d.size(), '0');
  return d;
}

void Expand(const std::vector<Piece>& pieces, size_t i, std::string& prefix,
            std::vector<std::string>& out) {
  if (i == pieces.size()) {
    out.push_back(prefix);
    return;
  }
  const Piece& p = pieces[i];
  size_t keep = prefix.size();
  if (p.ranges.empty()) {
    prefix += p.literal;
    Expand(pieces, i + 1, prefix, out);
  } else {
    for (const Range& r : p.ranges) {
      for (uint64_t v = r.lo;; ++v) {
        prefix += Pad(v, r.width);
        Expand(pieces, i + 1, prefix, out);
        prefix.resize(keep);
        if (v == r.hi) break;
      }
    }
  }
  prefix.resize(keep);
}

// Splits at commas that are outside brackets: "a1,b[1,2]" -> "a1", "b[1,2]".
// Returns [begin, end) pairs; brackets are checked later by ParsePattern.
std::vector<std::pair<size_t, size_t>> SplitTopLevel(const std::string& s) {
  std::vector<std::pair<size_t, size_t>> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '[') ++depth;
    if (s[i] == ']' && depth > 0) --depth;
    if (s[i] == ',' && depth == 0) {
      items.emplace_back(start, i);
      start = i + 1;
    }
  }
  items.emplace_back(start, s.size());
  return items;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n'; }

}  // namespace

Result<std::vector<std::string>> ExpandHostlist(const std::string& hostlist) {
  std::vector<std::vector<Piece>> patterns;
  uint64_t total = 0;
  for (auto [begin, end] : SplitTopLevel(hostlist)) {
    // Spaces around items are forgiven ("n1, n2" on a command line).
    while (begin < end && IsSpace(hostlist[begin])) ++begin;
    while (end > begin && IsSpace(hostlist[end - 1])) --end;
    if (begin == end) {
      return Bad(begin, hostlist.empty() ? "empty hostlist" : "empty name");
    }
    Result<std::vector<Piece>> pieces = ParsePattern(hostlist, begin, end);
    if (!pieces.ok()) return pieces.status();
    // Count before expanding so that "n[0-99999999]" costs nothing.
    uint64_t count = 1;
    for (const Piece& p : *pieces) {
      uint64_t n = p.Count();
      if (n > kMaxHostlistSize || count * n > kMaxHostlistSize) {
        count = kMaxHostlistSize + 1;
        break;
      }
      count *= n;
    }
    total += count;
    if (total > kMaxHostlistSize) {
      return Bad(begin,
                 "hostlist expands to more than " + std::to_string(kMaxHostlistSize) + " hosts");
    }
    patterns.push_back(std::move(*pieces));
  }
  std::vector<std::string> out;
  out.reserve(total);
  for (const std::vector<Piece>& pieces : patterns) {
    std::string prefix;
    Expand(pieces, 0, prefix, out);
  }
  return out;
}

namespace {

// A name split around its last run of digits: "gpu001a" -> "gpu", "001",
// "a". No digits (or too many to be a number) -> digits empty.
struct SplitName {
  std::string prefix, digits, suffix;
};

SplitName Split(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && !IsDigit(name[end - 1])) --end;
  size_t begin = end;
  while (begin > 0 && IsDigit(name[begin - 1])) --begin;
  if (begin == end || end - begin > 18) return {name, "", ""};
  return {name.substr(0, begin), name.substr(begin, end - begin), name.substr(end)};
}

std::string FormatRanges(const std::vector<uint64_t>& sorted, size_t width) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += Pad(sorted[i], width);
    if (j > i) out += '-' + Pad(sorted[j], width);
    i = j + 1;
  }
  return out;
}

}  // namespace

std::string FoldHostlist(const std::vector<std::string>& names) {
  // A group is (prefix, suffix, width): width is the digit count of
  // zero-padded numbers ("007") and 0 for natural ones ("7"). A natural
  // number whose length equals a padded group's width prints the same in
  // that group ("100" next to "099"), so it joins it.
  using Key = std::tuple<std::string, std::string, size_t>;
  std::map<Key, size_t> index;  // -> position in `groups`
  struct Group {
    Key key;
    std::string bare;  // for names without digits
    std::vector<uint64_t> numbers;
  };
  std::vector<Group> groups;
  std::vector<SplitName> split;
  split.reserve(names.size());
  for (const std::string& n : names) split.push_back(Split(n));

  // Pass 1: padded groups exist before natural numbers look for them.
  auto padded = [](const SplitName& s) { return s.digits.size() > 1 && s.digits[0] == '0'; };
  std::map<Key, bool> has_padded;
  for (const SplitName& s : split) {
    if (padded(s)) has_padded[{s.prefix, s.suffix, s.digits.size()}] = true;
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const SplitName& s = split[i];
    Key key;
    if (s.digits.empty()) {
      key = {names[i], "", SIZE_MAX};  // its own group, printed bare
    } else if (padded(s) || has_padded.count({s.prefix, s.suffix, s.digits.size()})) {
      key = {s.prefix, s.suffix, s.digits.size()};
    } else {
      key = {s.prefix, s.suffix, 0};
    }
    auto [it, inserted] = index.emplace(key, groups.size());
    if (inserted) groups.push_back(Group{key, names[i], {}});
    if (!s.digits.empty()) {
      groups[it->second].numbers.push_back(std::stoull(s.digits));
    }
  }

  std::string out;
  for (Group& g : groups) {
    if (!out.empty()) out += ',';
    const auto& [prefix, suffix, width] = g.key;
    std::sort(g.numbers.begin(), g.numbers.end());
    g.numbers.erase(std::unique(g.numbers.begin(), g.numbers.end()), g.numbers.end());
    if (g.numbers.size() <= 1) {
      out += g.bare;
    } else {
      out += prefix + "[" + FormatRanges(g.numbers, width) + "]" + suffix;
    }
  }
  return out;
}

}  // namespace cc
