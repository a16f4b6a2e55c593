// A string kept once for the whole process and passed around as a pointer.
// Pair stages hold a record per probe, N(N-1) of them and more, whose
// strings are few distinct values (node names, subnets, addresses, NIC
// names, states): as std::string each field costs 32 bytes a record,
// as Interned 8, and equality is a pointer compare (issue 14: 256 nodes
// within 64 MB).
#pragma once

#include <compare>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

namespace cc {

class Interned {
 public:
  Interned();                    // ""
  Interned(std::string_view s);  // NOLINT: implicit, as a std::string field was
  Interned(const std::string& s) : Interned(std::string_view(s)) {}  // NOLINT
  Interned(const char* s) : Interned(std::string_view(s)) {}         // NOLINT

  const std::string& str() const { return *s_; }
  operator const std::string&() const { return *s_; }  // NOLINT
  bool empty() const { return s_->empty(); }
  size_t size() const { return s_->size(); }
  const char* c_str() const { return s_->c_str(); }

  // One pool: equal strings are the same pointer.
  friend bool operator==(const Interned& a, const Interned& b) { return a.s_ == b.s_; }
  friend bool operator==(const Interned& a, const std::string& b) { return *a.s_ == b; }
  friend bool operator==(const Interned& a, const char* b) { return *a.s_ == b; }
  friend std::strong_ordering operator<=>(const Interned& a, const Interned& b) {
    return *a.s_ <=> *b.s_;
  }

 private:
  const std::string* s_;
};

inline std::string operator+(const std::string& a, const Interned& b) { return a + b.str(); }
inline std::string operator+(const Interned& a, const std::string& b) { return a.str() + b; }
inline std::string operator+(const char* a, const Interned& b) { return a + b.str(); }
inline std::string operator+(const Interned& a, const char* b) { return a.str() + b; }
inline std::ostream& operator<<(std::ostream& o, const Interned& s) { return o << s.str(); }

inline void to_json(nlohmann::json& j, const Interned& s) { j = s.str(); }
inline void from_json(const nlohmann::json& j, Interned& s) { s = Interned(j.get<std::string>()); }

}  // namespace cc
