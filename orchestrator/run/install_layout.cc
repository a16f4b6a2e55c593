#include "orchestrator/run/install_layout.h"

#include <unistd.h>

namespace cc {

namespace {

// "/usr/bin/" -> "/usr/bin"; "/" stays "/".
std::string WithoutTrailingSlashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

}  // namespace

std::vector<std::string> HelperDirectories(const std::string& controller_dir) {
  std::string dir = WithoutTrailingSlashes(controller_dir);
  std::vector<std::string> dirs{dir};
  size_t slash = dir.rfind('/');
  if (slash != std::string::npos && dir.substr(slash + 1) == "bin") {
    std::string prefix = slash == 0 ? "/" : dir.substr(0, slash);
    dirs.push_back(Join(prefix, kInstalledHelperDir));
  }
  return dirs;
}

std::string HelperPath(const std::string& controller_dir, const std::string& name,
                       const std::function<bool(const std::string&)>& exists) {
  std::vector<std::string> dirs = HelperDirectories(controller_dir);
  for (const auto& dir : dirs) {
    if (exists(Join(dir, name))) return Join(dir, name);
  }
  // Missing everywhere: where an install put the others (its
  // lib/clustercheck exists), else beside the controller.
  for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
    if (exists(*it)) return Join(*it, name);
  }
  return Join(dirs.front(), name);
}

std::string SelfDirectory() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}

std::string HelperProgram(const std::string& name) {
  return HelperPath(SelfDirectory(), name,
                    [](const std::string& path) { return access(path.c_str(), F_OK) == 0; });
}

}  // namespace cc
