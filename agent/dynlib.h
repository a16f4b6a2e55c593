// Opening GPU and NCCL libraries at run time (the agent links none of them,
// docs/architecture.md "The agent"). A missing library is a finding: the
// caller gets every path tried with dlerror's words, to put in the facts.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace cc::agent {

// One dlopen attempt: the name or path given to dlopen and what happened.
struct DynlibAttempt {
  std::string path;
  std::string error;  // empty when this attempt loaded the library
};

struct DynlibSearch {
  std::vector<DynlibAttempt> attempts;
  // ["/usr/lib/x86_64-linux-gnu/libnccl.so.2: cannot open shared object
  //  file: No such file or directory", ...] for the facts' "searched".
  nlohmann::json SearchedJson() const;
  // kNotFound "<library> not found; searched: <path> (<dlerror>), ...".
  Status NotFound(const std::string& library) const;
};

// A library handle that stays open for the life of the process: libcuda and
// libnccl start threads, and unloading them under those threads crashes.
class Dynlib {
 public:
  Dynlib() = default;
  bool loaded() const { return handle_ != nullptr; }
  // The file the loader really mapped (symlinks resolved), e.g.
  // "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3".
  const std::string& real_path() const { return real_path_; }

  // The address of a symbol or nullptr; *error gets dlerror's words.
  void* Symbol(const char* name, std::string* error) const;
  template <typename Fn>
  bool Bind(const char* name, Fn* fn, std::string* error) const {
    *fn = reinterpret_cast<Fn>(Symbol(name, error));
    return *fn != nullptr;
  }

  // Tries each candidate in order with dlopen(RTLD_NOW | RTLD_LOCAL) and
  // stops at the first that loads. Candidates without a '/' go through the
  // loader's own search (LD_LIBRARY_PATH, ld.so.cache). A candidate whose
  // file does not exist is recorded without calling dlopen.
  static Dynlib OpenFirst(const std::vector<std::string>& candidates, DynlibSearch* search);

 private:
  void* handle_ = nullptr;
  std::string real_path_;
};

// Candidate list for `file` (e.g. "libnccl.so.2"): each of `dirs` joined
// with file (an entry that already names a file ending in `file` or
// containing ".so" is kept as is), then the bare name for the loader's
// search. Duplicates are dropped, order kept.
std::vector<std::string> LibraryCandidates(const std::vector<std::string>& dirs,
                                           const std::string& file);

// A facts or health section about a library opened with Dynlib.
// {"status": "absent", "reason", "searched"}: no candidate loaded.
nlohmann::json LibraryAbsentSection(const std::string& reason, const DynlibSearch& search);
// {"status": "error", "reason", "searched", "path"}: the library loaded but
// lacks a required entry point (not NVIDIA's, or far too old).
nlohmann::json LibraryMissingSymbolSection(const std::string& real_path, const DynlibSearch& search,
                                           const std::string& error);
// `section` with "searched" and "path" (where the library came from) added.
nlohmann::json WithLibraryOrigin(nlohmann::json section, const std::string& real_path,
                                 const DynlibSearch& search);

// LD_LIBRARY_PATH split on ':' (empty entries dropped).
std::vector<std::string> SplitSearchPath(const std::string& value);

}  // namespace cc::agent
