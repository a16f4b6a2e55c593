// Reads files and directories under a root directory, so that every facts
// collector can be pointed at a fixture tree in tests (node_exporter's
// --path.procfs / --path.sysfs). The root "" or "/" is the real system.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace cc::agent {

class Sysroot {
 public:
  explicit Sysroot(std::string root);

  // True when the root is the running system (subprocess-based facts, rlimits
  // and getifaddrs only make sense there).
  bool IsReal() const { return real_; }
  const std::string& root() const { return root_; }

  // root + abs, e.g. Path("/proc/meminfo"). REQUIRES: abs starts with '/'.
  std::string Path(const std::string& abs) const;

  // Whole file. kNotFound when it does not exist, kIo for other errors (the
  // message names the path and errno). Files are capped at kMaxFileBytes.
  Result<std::string> Read(const std::string& abs) const;
  // First line without trailing whitespace; nullopt when unreadable.
  std::optional<std::string> ReadLine(const std::string& abs) const;
  // An integer file (sysfs style); nullopt when unreadable or not a number.
  std::optional<long long> ReadInt(const std::string& abs) const;

  bool Exists(const std::string& abs) const;
  bool IsDir(const std::string& abs) const;
  // Entry names of a directory, sorted, without "." and "..". Empty when the
  // directory is absent or unreadable.
  std::vector<std::string> List(const std::string& abs) const;
  // Target of a symbolic link; nullopt when abs is not a link.
  std::optional<std::string> ReadLink(const std::string& abs) const;

  static constexpr size_t kMaxFileBytes = 8 << 20;

 private:
  std::string root_;
  bool real_;
};

// Trims ASCII whitespace at both ends.
std::string Trim(const std::string& s);

// NAME=VALUE lines (os-release, nccl.conf): blank lines, '#' comments and
// lines without '=' or with an empty name are skipped; both sides trimmed.
std::vector<std::pair<std::string, std::string>> KeyValueLines(const std::string& text);

}  // namespace cc::agent
