#include "orchestrator/inventory/inventory_toml.h"

#include <algorithm>
#include <cmath>

namespace cc::inventory_internal {

using Json = nlohmann::json;

namespace {

// Control bytes as \xNN; a message stays one line per error.
std::string Escaped(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  return out;
}

std::string Cut(const std::string& s, size_t max) {
  return s.size() <= max ? s : s.substr(0, max) + "...";
}

}  // namespace

void ErrorList::Add(const toml::source_region& where, const std::string& key_path,
                    const std::string& what) {
  uint32_t line = where.begin.line, column = where.begin.column;
  if (line == 0) line = column = 1;
  if (column == 0) column = 1;
  std::string text = path_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  if (!key_path.empty()) text += Escaped(Cut(key_path, 200)) + ": ";
  errors_.push_back(Error{line, column, text + Escaped(Cut(what, 1000))});
}

Status ErrorList::ToStatus() const {
  if (errors_.empty()) return Status::Ok();
  // toml::table iterates keys alphabetically; people read files top down.
  std::vector<Error> sorted = errors_;
  std::stable_sort(sorted.begin(), sorted.end(), [](const Error& a, const Error& b) {
    return std::tie(a.line, a.column) < std::tie(b.line, b.column);
  });
  constexpr size_t kShown = 20;
  std::string msg;
  for (size_t i = 0; i < sorted.size() && i < kShown; ++i) {
    if (i > 0) msg += '\n';
    msg += sorted[i].text;
  }
  if (sorted.size() > kShown) {
    msg += "\n(" + std::to_string(sorted.size() - kShown) + " more errors)";
  }
  return Status::BadInventory(msg);
}

std::string TypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    default:
      return "nothing";
  }
}

namespace {

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

std::string Shown(const std::string& s) { return "'" + Escaped(Cut(s, 64)) + "'"; }

std::string UnknownKey(const std::string& key, const std::vector<std::string>& known) {
  return "unknown key" + DidYouMean(key, known);
}

std::string DidYouMean(const std::string& key, const std::vector<std::string>& known) {
  // Keys are short; anything long is not a typo of a known key.
  if (key.size() > 64) return "";
  std::string best;
  size_t best_distance = 3;  // at most two edits
  for (const std::string& k : known) {
    size_t d = EditDistance(key, k);
    if (d < best_distance && d < k.size()) {
      best = k;
      best_distance = d;
    }
  }
  return best.empty() ? "" : " (did you mean " + Shown(best) + "?)";
}

std::string Join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::optional<std::string> GetString(const toml::node& node, const std::string& path,
                                     ErrorList& err) {
  if (const auto* s = node.as_string()) return s->get();
  err.Add(node.source(), path, "expected a string, got " + TypeName(node));
  return std::nullopt;
}

std::optional<int64_t> GetInt(const toml::node& node, const std::string& path, int64_t lo,
                              int64_t hi, ErrorList& err) {
  const auto* i = node.as_integer();
  if (i == nullptr) {
    err.Add(node.source(), path, "expected an integer, got " + TypeName(node));
    return std::nullopt;
  }
  int64_t v = i->get();
  if (v < lo || v > hi) {
    std::string range = hi == INT64_MAX ? ">= " + std::to_string(lo)
                                        : "in " + std::to_string(lo) + ".." + std::to_string(hi);
    err.Add(node.source(), path, std::to_string(v) + " is out of range (must be " + range + ")");
    return std::nullopt;
  }
  return v;
}

bool IsListenAddress(const std::string& s) {
  size_t colon = s.rfind(':');
  if (colon == std::string::npos) return true;
  std::string port = s.substr(colon + 1);
  return !port.empty() && port.size() <= 5 &&
         port.find_first_not_of("0123456789") == std::string::npos && std::stoi(port) <= 65535;
}

std::optional<bool> GetBool(const toml::node& node, const std::string& path, ErrorList& err) {
  if (const auto* b = node.as_boolean()) return b->get();
  err.Add(node.source(), path, "expected true or false, got " + TypeName(node));
  return std::nullopt;
}

std::optional<double> GetPositive(const toml::node& node, const std::string& path, ErrorList& err) {
  std::optional<double> v;
  if (const auto* i = node.as_integer()) v = static_cast<double>(i->get());
  if (const auto* f = node.as_floating_point()) v = f->get();
  if (!v) {
    err.Add(node.source(), path, "expected a number, got " + TypeName(node));
    return std::nullopt;
  }
  if (!std::isfinite(*v) || *v <= 0) {
    err.Add(node.source(), path, "must be a finite number > 0");
    return std::nullopt;
  }
  return v;
}

std::optional<std::vector<std::string>> GetStringArray(const toml::node& node,
                                                       const std::string& path, ErrorList& err) {
  const auto* arr = node.as_array();
  if (arr == nullptr) {
    err.Add(node.source(), path, "expected an array of strings, got " + TypeName(node));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (size_t i = 0; i < arr->size(); ++i) {
    std::optional<std::string> s = GetString((*arr)[i], path + "[" + std::to_string(i) + "]", err);
    if (s) out.push_back(*s);
    ok = ok && s.has_value();
  }
  if (!ok) return std::nullopt;
  return out;
}

namespace {

bool IsEnvName(const std::string& name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::optional<std::map<std::string, std::string>> GetEnvTable(const toml::node& node,
                                                              const std::string& path,
                                                              ErrorList& err) {
  const toml::table* table = GetTable(node, path, err);
  if (table == nullptr) return std::nullopt;
  std::map<std::string, std::string> out;
  bool ok = true;
  for (auto&& [key, value] : *table) {
    std::string k(key.str());
    if (!IsEnvName(k)) {
      err.Add(key.source(), Join(path, k), "not a valid environment variable name");
      ok = false;
      continue;
    }
    std::optional<std::string> s = GetString(value, Join(path, k), err);
    if (s) out[k] = *s;
    ok = ok && s.has_value();
  }
  if (!ok) return std::nullopt;
  return out;
}

const toml::table* GetTable(const toml::node& node, const std::string& path, ErrorList& err) {
  if (const auto* t = node.as_table()) return t;
  err.Add(node.source(), path, "expected a table, got " + TypeName(node));
  return nullptr;
}

std::optional<Json> ToJson(const toml::node& node, const std::string& path, ErrorList& err,
                           int max_depth) {
  if (max_depth < 0) {
    err.Add(node.source(), path, "nested too deeply");
    return std::nullopt;
  }
  if (const auto* s = node.as_string()) return Json(s->get());
  if (const auto* i = node.as_integer()) return Json(i->get());
  if (const auto* f = node.as_floating_point()) return Json(f->get());
  if (const auto* b = node.as_boolean()) return Json(b->get());
  if (const auto* arr = node.as_array()) {
    Json out = Json::array();
    for (size_t i = 0; i < arr->size(); ++i) {
      std::optional<Json> v =
          ToJson((*arr)[i], path + "[" + std::to_string(i) + "]", err, max_depth - 1);
      if (!v) return std::nullopt;
      out.push_back(std::move(*v));
    }
    return out;
  }
  if (const auto* table = node.as_table()) {
    Json out = Json::object();
    for (auto&& [key, value] : *table) {
      std::string k(key.str());
      std::optional<Json> v = ToJson(value, Join(path, k), err, max_depth - 1);
      if (!v) return std::nullopt;
      out[k] = std::move(*v);
    }
    return out;
  }
  err.Add(node.source(), path, "dates and times are not accepted here, got " + TypeName(node));
  return std::nullopt;
}

}  // namespace cc::inventory_internal
