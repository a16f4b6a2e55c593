#include "common/random_hex.h"

#include <fcntl.h>
#include <unistd.h>

#include <random>

namespace cc {

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  bool ok = fd >= 0 && read(fd, raw.data(), bytes) == static_cast<ssize_t>(bytes);
  if (fd >= 0) close(fd);
  if (!ok) {
    std::random_device rd;
    for (char& c : raw) c = static_cast<char>(rd());
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

}  // namespace cc
