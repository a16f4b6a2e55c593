#include "agent/dynlib.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>

#include "common/join.h"

namespace cc::agent {

nlohmann::json DynlibSearch::SearchedJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& a : attempts) {
    out.push_back(a.error.empty() ? a.path + ": loaded" : a.path + ": " + a.error);
  }
  return out;
}

Status DynlibSearch::NotFound(const std::string& library) const {
  std::vector<std::string> tried;
  for (const auto& a : attempts) tried.push_back(a.path + " (" + a.error + ")");
  return Status::NotFound(library + " not found; searched: " + Join(tried, ", "));
}

void* Dynlib::Symbol(const char* name, std::string* error) const {
  if (handle_ == nullptr) {
    if (error) *error = "library not loaded";
    return nullptr;
  }
  dlerror();
  void* p = dlsym(handle_, name);
  if (p == nullptr && error) {
    const char* e = dlerror();
    *error = e ? e : std::string(name) + ": symbol is null";
  }
  return p;
}

namespace {

std::string LoadedPath(void* handle, const std::string& fallback) {
  link_map* lm = nullptr;
  std::string path = fallback;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm != nullptr && lm->l_name != nullptr &&
      lm->l_name[0] != '\0') {
    path = lm->l_name;
  }
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) != nullptr) return resolved;
  return path;
}

}  // namespace

Dynlib Dynlib::OpenFirst(const std::vector<std::string>& candidates, DynlibSearch* search) {
  Dynlib lib;
  for (const auto& c : candidates) {
    DynlibAttempt attempt{c, ""};
    struct stat st;
    if (c.find('/') != std::string::npos && stat(c.c_str(), &st) != 0) {
      // Saves a dlopen and keeps the report short and exact.
      attempt.error = "no such file";
      search->attempts.push_back(attempt);
      continue;
    }
    dlerror();
    void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      attempt.error = e ? e : "dlopen failed";
      search->attempts.push_back(attempt);
      continue;
    }
    search->attempts.push_back(attempt);
    lib.handle_ = h;
    lib.real_path_ = LoadedPath(h, c);
    break;
  }
  return lib;
}

std::vector<std::string> LibraryCandidates(const std::vector<std::string>& dirs,
                                           const std::string& file) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& s) {
    if (!s.empty() && std::find(out.begin(), out.end(), s) == out.end()) {
      out.push_back(s);
    }
  };
  for (std::string d : dirs) {
    if (d.empty()) continue;
    std::string base = d.substr(d.find_last_of('/') + 1);
    if (base.find(".so") != std::string::npos) {
      add(d);  // already names a library file
      continue;
    }
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    add(d + "/" + file);
  }
  add(file);
  return out;
}

nlohmann::json LibraryAbsentSection(const std::string& reason, const DynlibSearch& search) {
  return {{"status", "absent"}, {"reason", reason}, {"searched", search.SearchedJson()}};
}

nlohmann::json LibraryMissingSymbolSection(const std::string& real_path, const DynlibSearch& search,
                                           const std::string& error) {
  return {{"status", "error"},
          {"reason", real_path + ": " + error},
          {"searched", search.SearchedJson()},
          {"path", real_path}};
}

nlohmann::json WithLibraryOrigin(nlohmann::json section, const std::string& real_path,
                                 const DynlibSearch& search) {
  section["searched"] = search.SearchedJson();
  section["path"] = real_path;
  return section;
}

std::vector<std::string> SplitSearchPath(const std::string& value) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= value.size()) {
    size_t colon = value.find(':', start);
    if (colon == std::string::npos) colon = value.size();
    if (colon > start) out.push_back(value.substr(start, colon - start));
    start = colon + 1;
  }
  return out;
}

}  // namespace cc::agent
