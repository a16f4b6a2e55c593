#include "common/shell_frame.h"

#include <cstdio>
#include <random>

namespace cc {
namespace {

std::string_view Trim(std::string_view s) {
  const char* kBlank = " \t\r\n";
  size_t first = s.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  size_t last = s.find_last_not_of(kBlank);
  return s.substr(first, last - first + 1);
}

std::string JoinNoise(std::string_view before, std::string_view after) {
  std::string out(Trim(before));
  std::string_view tail = Trim(after);
  if (!out.empty() && !tail.empty()) out += "\n";
  out += tail;
  return out;
}

}  // namespace

ShellFrame MakeShellFrame(std::string_view token) {
  std::string t(token);
  return {":clustercheck-begin:" + t + ":", ":clustercheck-end:" + t + ":"};
}

ShellFrame NewShellFrame() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char token[17];
  std::snprintf(token, sizeof token, "%016llx", static_cast<unsigned long long>(rng()));
  return MakeShellFrame(token);
}

std::string FrameScript(const ShellFrame& frame, std::string_view script) {
  // The markers hold only [:a-z0-9-], so single quotes suffice. A subshell,
  // so that an `exit` in the script still leaves the end marker to print.
  // One line: a csh login shell (tcsh on some sites) rejects a newline
  // inside the quoted `sh -c` argument.
  return "printf '\\n%s\\n' '" + frame.begin + "'; (" + std::string(script) +
         "); cc_frame_status=$?; printf '\\n%s\\n' '" + frame.end + "'; exit $cc_frame_status";
}

FramedOutput ParseFramedOutput(const ShellFrame& frame, std::string_view output) {
  FramedOutput out;
  size_t begin = output.find(frame.begin);
  if (begin == std::string_view::npos) {
    out.noise = std::string(Trim(output));
    return out;
  }
  std::string_view before = output.substr(0, begin);
  size_t body_start = begin + frame.begin.size();
  if (body_start < output.size() && output[body_start] == '\n') ++body_start;
  std::string end_line = "\n" + frame.end;
  size_t end = output.find(end_line, body_start);
  // No output at all: the end marker follows the begin line directly.
  if (output.substr(body_start, frame.end.size()) == frame.end) {
    end = body_start;
    end_line = frame.end;
  }
  if (end == std::string_view::npos) {
    out.body = std::string(output.substr(body_start));
    out.noise = std::string(Trim(before));
    return out;
  }
  out.complete = true;
  out.body = std::string(output.substr(body_start, end - body_start));
  std::string_view after = output.substr(end + end_line.size());
  out.noise = JoinNoise(before, after);
  return out;
}

std::string QuoteShellText(std::string_view text, size_t max_chars) {
  std::string out;
  for (char c : Trim(text)) {
    if (c == '\r') continue;
    if (c == '\n') {
      out += " | ";
    } else if (static_cast<unsigned char>(c) < 0x20 && c != '\t') {
      out += '?';  // escape sequences and other control bytes
    } else {
      out += c;
    }
    if (out.size() >= max_chars) {
      out.resize(max_chars);
      out += "...";
      break;
    }
  }
  return out;
}

}  // namespace cc
