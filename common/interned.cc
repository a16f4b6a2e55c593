#include "common/interned.h"

#include <mutex>
#include <unordered_set>

namespace cc {
namespace {

// Never freed: the distinct values of a run are few, and an Interned may
// outlive any owner but the process.
struct Pool {
  std::mutex mu;
  std::unordered_set<std::string> strings;
};

Pool& ThePool() {
  static Pool* pool = new Pool;  // NOLINT: leaked on purpose, see above
  return *pool;
}

const std::string* Intern(std::string_view s) {
  Pool& p = ThePool();
  std::lock_guard<std::mutex> lock(p.mu);
  // Elements of an unordered_set keep their address across rehashing.
  return &*p.strings.emplace(s).first;
}

}  // namespace

Interned::Interned() : s_(Intern("")) {}
Interned::Interned(std::string_view s) : s_(Intern(s)) {}

}  // namespace cc
