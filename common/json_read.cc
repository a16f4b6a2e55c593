#include "common/json_read.h"

#include <cmath>
#include <limits>

namespace cc {

using nlohmann::json;

namespace {

// A value this long in a note would swamp the report it is printed in.
constexpr size_t kShownValueChars = 40;

// The member when present and not null: null is how writers say "none".
const json* Present(const json& j, std::string_view key) {
  const json& m = JsonMember(j, key);
  return m.is_null() ? nullptr : &m;
}

void NoteIf(JsonProblems* problems, std::string_view key, std::string_view expected,
            const json& found) {
  if (problems) problems->Note(key, expected, found);
}

}  // namespace

void JsonProblems::Note(std::string_view field, std::string_view expected, const json& found) {
  std::string shown = JsonDump(found);
  if (shown.size() > kShownValueChars) shown = shown.substr(0, kShownValueChars) + "...";
  notes_.push_back(path_ + std::string(field) + ": " + std::string(expected) + " expected, " +
                   JsonTypePhrase(found) + " found (" + shown + ")");
}

JsonProblems::Within::Within(JsonProblems* problems, std::string_view member)
    : problems_(problems), outer_(problems ? problems->path_.size() : 0) {
  if (problems_) problems_->path_ += std::string(member) + ".";
}

JsonProblems::Within::~Within() {
  if (problems_) problems_->path_.resize(outer_);
}

const char* JsonTypePhrase(const json& j) {
  switch (j.type()) {
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "a number";
    case json::value_t::array:
      return "an array";
    case json::value_t::object:
      return "an object";
    case json::value_t::binary:
      return "binary data";
    default:
      return "null";
  }
}

const json& JsonMember(const json& j, std::string_view key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string JsonString(const json& j, std::string_view key, std::string_view fallback,
                       JsonProblems* problems) {
  const json* m = Present(j, key);
  if (!m) return std::string(fallback);
  if (m->is_string()) return m->get<std::string>();
  NoteIf(problems, key, "a string", *m);
  return std::string(fallback);
}

double JsonNumber(const json& j, std::string_view key, double fallback, JsonProblems* problems) {
  const json* m = Present(j, key);
  if (!m) return fallback;
  if (m->is_number() && std::isfinite(m->get<double>())) return m->get<double>();
  NoteIf(problems, key, "a number", *m);
  return fallback;
}

int64_t JsonInt(const json& j, std::string_view key, int64_t fallback, JsonProblems* problems,
                int64_t min, int64_t max) {
  const json* m = Present(j, key);
  if (!m) return fallback;
  std::string expected = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (m->is_number_unsigned()) {
    uint64_t u = m->get<uint64_t>();
    if (max >= 0 && u <= static_cast<uint64_t>(max) && static_cast<int64_t>(u) >= min) {
      return static_cast<int64_t>(u);
    }
  } else if (m->is_number_integer()) {
    int64_t i = m->get<int64_t>();
    if (i >= min && i <= max) return i;
  } else if (m->is_number_float()) {
    // Doubles are exact up to 2^53; past it the bounds' conversion rounds.
    double d = m->get<double>();
    if (std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(min) &&
        d <= static_cast<double>(max) && std::fabs(d) < 0x1p53) {
      return static_cast<int64_t>(d);
    }
  }
  NoteIf(problems, key, expected, *m);
  return fallback;
}

int JsonCount(const json& j, std::string_view key, int fallback, JsonProblems* problems) {
  return static_cast<int>(
      JsonInt(j, key, fallback, problems, 0, std::numeric_limits<int32_t>::max()));
}

bool JsonBool(const json& j, std::string_view key, bool fallback, JsonProblems* problems) {
  const json* m = Present(j, key);
  if (!m) return fallback;
  if (m->is_boolean()) return m->get<bool>();
  NoteIf(problems, key, "a boolean", *m);
  return fallback;
}

const json& JsonArray(const json& j, std::string_view key, JsonProblems* problems) {
  static const json kEmpty = json::array();
  const json* m = Present(j, key);
  if (m && m->is_array()) return *m;
  if (m) NoteIf(problems, key, "an array", *m);
  return kEmpty;
}

const json& JsonObject(const json& j, std::string_view key, JsonProblems* problems) {
  static const json kEmpty = json::object();
  const json* m = Present(j, key);
  if (m && m->is_object()) return *m;
  if (m) NoteIf(problems, key, "an object", *m);
  return kEmpty;
}

std::vector<std::string> JsonStrings(const json& j, std::string_view key, JsonProblems* problems) {
  std::vector<std::string> out;
  const json& a = JsonArray(j, key, problems);
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].is_string()) {
      out.push_back(a[i].get<std::string>());
    } else {
      NoteIf(problems, std::string(key) + "[" + std::to_string(i) + "]", "a string", a[i]);
    }
  }
  return out;
}

std::string JsonDump(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace cc
