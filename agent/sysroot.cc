#include "agent/sysroot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

namespace cc::agent {

Sysroot::Sysroot(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  real_ = root_.empty() || root_ == "/";
}

std::string Sysroot::Path(const std::string& abs) const {
  if (real_) return abs;
  return root_ + abs;
}

Result<std::string> Sysroot::Read(const std::string& abs) const {
  const std::string path = Path(abs);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    std::string msg = path + ": " + strerror(e);
    if (e == ENOENT || e == ENOTDIR) return Status::NotFound(msg);
    return Status::Io(msg);
  }
  std::string out;
  char buf[16384];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      // sysfs answers some reads with an error (speed of a down link: EINVAL).
      int e = errno;
      close(fd);
      return Status::Io(path + ": " + strerror(e));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() >= kMaxFileBytes) break;
  }
  close(fd);
  return out;
}

std::optional<std::string> Sysroot::ReadLine(const std::string& abs) const {
  auto r = Read(abs);
  if (!r.ok()) return std::nullopt;
  const std::string& s = *r;
  size_t nl = s.find('\n');
  return Trim(nl == std::string::npos ? s : s.substr(0, nl));
}

std::optional<long long> Sysroot::ReadInt(const std::string& abs) const {
  auto line = ReadLine(abs);
  if (!line || line->empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(line->c_str(), &end, 0);
  if (errno != 0 || end == line->c_str() || *end != '\0') return std::nullopt;
  return v;
}

bool Sysroot::Exists(const std::string& abs) const {
  struct stat st;
  return stat(Path(abs).c_str(), &st) == 0 || lstat(Path(abs).c_str(), &st) == 0;
}

bool Sysroot::IsDir(const std::string& abs) const {
  struct stat st;
  return stat(Path(abs).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> Sysroot::List(const std::string& abs) const {
  std::vector<std::string> names;
  DIR* d = opendir(Path(abs).c_str());
  if (d == nullptr) return names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    names.push_back(std::move(n));
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> Sysroot::ReadLink(const std::string& abs) const {
  char buf[4096];
  ssize_t n = readlink(Path(abs).c_str(), buf, sizeof buf - 1);
  if (n < 0) return std::nullopt;
  return std::string(buf, static_cast<size_t>(n));
}

std::string Trim(const std::string& s) {
  const char* ws = " \t\r\n\v\f";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::vector<std::pair<std::string, std::string>> KeyValueLines(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    line = Trim(line);
    if (line.empty() || line[0] == '#') continue;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string name = Trim(line.substr(0, eq));
    if (!name.empty()) out.emplace_back(name, Trim(line.substr(eq + 1)));
  }
  return out;
}

}  // namespace cc::agent
