#include "agent/line_reader.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

namespace cc::agent {

LineReader::Got LineReader::Next(std::string* line, Deadline deadline) {
  for (;;) {
    size_t nl = buffer_.find('\n');
    if (nl != std::string::npos) {
      *line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return Got::kLine;
    }
    if (eof_) {
      if (buffer_.empty()) return Got::kEof;
      *line = std::move(buffer_);
      buffer_.clear();
      return Got::kLine;
    }
    pollfd p{fd_, POLLIN, 0};
    long long wait = deadline.RemainingMs();
    int r = poll(&p, 1, wait > 1000000 ? 1000000 : static_cast<int>(wait));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) {
      if (deadline.Passed()) return Got::kTimeout;
      continue;
    }
    char buf[65536];
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace cc::agent
