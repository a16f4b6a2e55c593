// Reads newline-terminated lines from a file descriptor with a deadline.
#pragma once

#include <optional>
#include <string>

#include "common/deadline.h"

namespace cc::agent {

class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}
  enum class Got { kLine, kEof, kTimeout };
  // Fills *line (without '\n') when it returns kLine. A final unterminated
  // line before EOF is returned as a line.
  Got Next(std::string* line, Deadline deadline);

 private:
  int fd_;
  std::string buffer_;
  bool eof_ = false;
};

}  // namespace cc::agent
