#include "orchestrator/stages/parity/version_pin.h"

#include <algorithm>
#include <string_view>

namespace cc {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The part that orders: without a leading 'v' and without "+metadata".
std::string_view OrderedPart(std::string_view s) {
  if (s.size() > 1 && (s[0] == 'v' || s[0] == 'V') && IsDigit(s[1])) {
    s.remove_prefix(1);
  }
  size_t plus = s.find('+');
  return plus == std::string_view::npos ? s : s.substr(0, plus);
}

std::string_view Metadata(std::string_view s) {
  size_t plus = s.find('+');
  return plus == std::string_view::npos ? std::string_view() : s.substr(plus + 1);
}

struct Token {
  bool numeric = false;
  std::string_view text;  // digits without leading zeros ("" is 0), or letters
};

std::vector<Token> Tokenize(std::string_view s) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    if (IsDigit(s[i])) {
      while (i < s.size() && IsDigit(s[i])) ++i;
      std::string_view d = s.substr(start, i - start);
      while (!d.empty() && d.front() == '0') d.remove_prefix(1);
      out.push_back({true, d});
    } else if (IsAlpha(s[i])) {
      while (i < s.size() && IsAlpha(s[i])) ++i;
      out.push_back({false, s.substr(start, i - start)});
    } else {
      ++i;
    }
  }
  return out;
}

int Sign(int v) { return (v > 0) - (v < 0); }

// Numbers of any length compare without overflow: by length, then digits.
int CompareNumbers(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return Sign(a.compare(b));
}

// `a` or `b` may be null: a part the other version lacks.
int CompareTokens(const Token* a, const Token* b) {
  if (a && b) {
    if (a->numeric && b->numeric) return CompareNumbers(a->text, b->text);
    if (!a->numeric && !b->numeric) return Sign(a->text.compare(b->text));
    return a->numeric ? 1 : -1;  // "2.18.1" > "2.18rc1"
  }
  if (!a && !b) return 0;
  if (!a) return b->numeric ? CompareNumbers("", b->text) : 1;
  return a->numeric ? CompareNumbers(a->text, "") : -1;
}

int CompareTokenLists(const std::vector<Token>& a, const std::vector<Token>& b) {
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    int c = CompareTokens(i < a.size() ? &a[i] : nullptr, i < b.size() ? &b[i] : nullptr);
    if (c != 0) return c;
  }
  return 0;
}

// Bare or "==" pin on a version: the pin's parts are the value's leading
// parts; metadata, when the pin names some, must be the same.
bool VersionPrefixMatches(const std::string& pin, const std::string& value) {
  if (!IsVersionLike(value)) return false;
  std::vector<Token> p = Tokenize(OrderedPart(pin));
  std::vector<Token> v = Tokenize(OrderedPart(value));
  for (size_t i = 0; i < p.size(); ++i) {
    if (CompareTokens(&p[i], i < v.size() ? &v[i] : nullptr) != 0) return false;
  }
  std::string_view meta = Metadata(pin);
  return meta.empty() || meta == Metadata(value);
}

bool EqualMatches(const std::string& operand, const std::string& value) {
  if (IsVersionLike(operand)) return VersionPrefixMatches(operand, value);
  return std::string(Trim(value)) == operand;
}

Status Bad(const std::string& pin, const std::string& why) {
  return Status::BadInventory("pin \"" + pin + "\": " + why);
}

bool IsOperatorChar(char c) { return c == '<' || c == '>' || c == '=' || c == '!'; }

// Parses one comma-separated part that starts with an operator.
Result<PinClause> ParseClause(const std::string& pin, std::string_view part) {
  static const struct {
    const char* text;
    PinOp op;
  } kOps[] = {{">=", PinOp::kGe}, {"<=", PinOp::kLe}, {"==", PinOp::kEq},
              {"!=", PinOp::kNe}, {">", PinOp::kGt},  {"<", PinOp::kLt}};
  if (part.empty()) return Bad(pin, "empty part between commas");
  if (!IsOperatorChar(part[0])) {
    return Bad(pin, "\"" + std::string(part) +
                        "\" needs an operator: each comma-joined part is a "
                        "comparison, e.g. \">=2.18,<3\"");
  }
  size_t op_len = 0;
  while (op_len < part.size() && IsOperatorChar(part[op_len])) ++op_len;
  std::string_view op_text = part.substr(0, op_len);
  for (const auto& o : kOps) {
    if (op_text != o.text) continue;
    std::string operand(Trim(part.substr(op_len)));
    if (operand.empty()) {
      return Bad(pin, std::string("missing version after \"") + o.text + "\"");
    }
    bool ordering = o.op != PinOp::kEq && o.op != PinOp::kNe;
    if (ordering && !IsVersionLike(operand)) {
      return Bad(pin, "\"" + operand + "\" after \"" + o.text +
                          "\" is not a version (it must start with a digit)");
    }
    return PinClause{o.op, operand};
  }
  return Bad(pin, "unknown operator \"" + std::string(op_text) +
                      "\" (use <, <=, >, >=, == or !=, or a bare value)");
}

}  // namespace

bool IsVersionLike(const std::string& s) {
  std::string_view t = Trim(s);
  if (t.size() > 1 && (t[0] == 'v' || t[0] == 'V')) t.remove_prefix(1);
  return !t.empty() && IsDigit(t[0]);
}

int CompareVersions(const std::string& a, const std::string& b) {
  return CompareTokenLists(Tokenize(OrderedPart(Trim(a))), Tokenize(OrderedPart(Trim(b))));
}

Result<VersionPin> ParseVersionPin(const std::string& pin) {
  VersionPin out;
  out.text = std::string(Trim(pin));
  if (out.text.empty()) return Bad(pin, "empty pin");
  if (!IsOperatorChar(out.text[0])) {
    if (IsVersionLike(out.text) && out.text.find(',') != std::string::npos) {
      return Bad(out.text,
                 "a comma joins comparisons (\">=2.18,<3\"); a list of "
                 "allowed versions is not supported");
    }
    out.clauses.push_back({PinOp::kExact, out.text});
    return out;
  }
  std::string_view rest = out.text;
  while (true) {
    size_t comma = rest.find(',');
    Result<PinClause> clause = ParseClause(out.text, Trim(rest.substr(0, comma)));
    if (!clause.ok()) return clause.status();
    out.clauses.push_back(std::move(*clause));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

bool Matches(const VersionPin& pin, const std::string& value) {
  if (pin.clauses.empty()) return false;
  for (const PinClause& c : pin.clauses) {
    bool ok = false;
    switch (c.op) {
      case PinOp::kExact:
      case PinOp::kEq:
        ok = EqualMatches(c.operand, value);
        break;
      case PinOp::kNe:
        ok = !EqualMatches(c.operand, value);
        break;
      case PinOp::kLt:
      case PinOp::kLe:
      case PinOp::kGt:
      case PinOp::kGe: {
        if (!IsVersionLike(value)) return false;
        int cmp = CompareVersions(value, c.operand);
        ok = (c.op == PinOp::kLt && cmp < 0) || (c.op == PinOp::kLe && cmp <= 0) ||
             (c.op == PinOp::kGt && cmp > 0) || (c.op == PinOp::kGe && cmp >= 0);
        break;
      }
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace cc
