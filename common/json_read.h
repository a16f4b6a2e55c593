// Reading JSON that someone else wrote: a result's or a verdict's
// evidence, a run's meta, a node's facts, as the store holds them. Another
// version, another stage or a bug may have written any shape, and a report
// of a stored run must never end the process over it (README.md "Where
// results go"). Each accessor returns the member when it has the asked-for
// type and a fallback otherwise; none throws. A member that is missing or
// null is simply absent; one that is there with another type is a problem,
// noted in `problems` when the caller passes one, so that a report can say
// which field it could not read.
//
// Pure; thread-safe (a JsonProblems is not shared).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace cc {

// What could not be read, one note a field: "symptoms: an array expected,
// a number found".
class JsonProblems {
 public:
  // Notes under `field` that `expected` was expected and `found` held.
  void Note(std::string_view field, std::string_view expected, const nlohmann::json& found);
  // A note of one's own ("gpu: -3 is not a GPU index").
  void Note(std::string note) { notes_.push_back(std::move(note)); }
  bool empty() const { return notes_.empty(); }
  const std::vector<std::string>& notes() const { return notes_; }

  // While it lives, fields are noted as members of `member`
  // ("actions.drain[1]: ..." for a read of drain inside actions).
  // `problems` may be nullptr.
  class Within {
   public:
    Within(JsonProblems* problems, std::string_view member);
    ~Within();
    Within(const Within&) = delete;
    Within& operator=(const Within&) = delete;

   private:
    JsonProblems* problems_;
    size_t outer_;  // the length of the path before
  };

 private:
  std::vector<std::string> notes_;
  std::string path_;  // "actions." inside Within(p, "actions")
};

// "a string", "a number", "an array", "an object", "null", "a boolean".
const char* JsonTypePhrase(const nlohmann::json& j);

// j[key] when `j` is an object that has it; a null value otherwise.
const nlohmann::json& JsonMember(const nlohmann::json& j, std::string_view key);

// j[key] as a string; `fallback` when absent or of another type.
std::string JsonString(const nlohmann::json& j, std::string_view key,
                       std::string_view fallback = {}, JsonProblems* problems = nullptr);
// j[key] as a finite number; `fallback` when absent or not a number.
double JsonNumber(const nlohmann::json& j, std::string_view key, double fallback = 0,
                  JsonProblems* problems = nullptr);
// j[key] as an integer in [min, max]; a whole float in range counts.
// `fallback` when absent, not a number, fractional or out of range.
int64_t JsonInt(const nlohmann::json& j, std::string_view key, int64_t fallback = 0,
                JsonProblems* problems = nullptr, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
// A count: JsonInt in [0, INT32_MAX], so that it fits an int and adds up.
int JsonCount(const nlohmann::json& j, std::string_view key, int fallback = 0,
              JsonProblems* problems = nullptr);
bool JsonBool(const nlohmann::json& j, std::string_view key, bool fallback = false,
              JsonProblems* problems = nullptr);
// j[key] when it is an array (an object); an empty one otherwise.
const nlohmann::json& JsonArray(const nlohmann::json& j, std::string_view key,
                                JsonProblems* problems = nullptr);
const nlohmann::json& JsonObject(const nlohmann::json& j, std::string_view key,
                                 JsonProblems* problems = nullptr);
// The strings of the array j[key], in order; other elements are left out
// (and noted).
std::vector<std::string> JsonStrings(const nlohmann::json& j, std::string_view key,
                                     JsonProblems* problems = nullptr);

// Calls each(element) for every object in the array j[key], with notes
// made meanwhile under "key[i]"; other elements are left out and noted.
template <typename Each>
void JsonForEachObject(const nlohmann::json& j, std::string_view key, JsonProblems* problems,
                       Each&& each) {
  const nlohmann::json& a = JsonArray(j, key, problems);
  for (size_t i = 0; i < a.size(); ++i) {
    std::string at = std::string(key) + "[" + std::to_string(i) + "]";
    if (!a[i].is_object()) {
      if (problems) problems->Note(at, "an object", a[i]);
      continue;
    }
    JsonProblems::Within in_element(problems, at);
    each(a[i]);
  }
}

// j.dump(indent) with invalid UTF-8 replaced (U+FFFD): text the agent read
// from a node (a kernel log line) may hold any byte, and nlohmann::json
// throws on dumping it otherwise.
std::string JsonDump(const nlohmann::json& j, int indent = -1);

}  // namespace cc
