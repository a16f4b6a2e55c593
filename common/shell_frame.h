// Output framing for commands that run through a user's login shell.
//
// Many sites' shell startup files print text even for non-interactive
// shells (module systems, conda banners, "you have mail"). sshd runs every
// command as `$SHELL -c CMD`, so that text arrives on the command's stdout
// before (and, from logout files, after) what the command printed. A framed
// command prints a begin marker line before its output and an end marker
// line after it; only what lies between them is the command's. Markers carry
// a random token, so no banner and no output can imitate them.
//
// In common/ because both sides frame: the controller its remote commands
// (orchestrator/transport/framed_command.h), the agent its `bash -lc` probes.
//
// Pure: no I/O except NewShellFrame's random token.
#pragma once

#include <string>
#include <string_view>

namespace cc {

struct ShellFrame {
  std::string begin;  // ":clustercheck-begin:<token>:"
  std::string end;    // ":clustercheck-end:<token>:"
};

// Markers for `token`. REQUIRES: token has no quote, space or newline.
ShellFrame MakeShellFrame(std::string_view token);
// Markers with a fresh random token (16 hex digits).
ShellFrame NewShellFrame();

// A one-line POSIX sh script that prints "\n<begin>\n", runs `script` in a
// subshell (so an `exit` in it still lets the end marker print), then prints
// "\n<end>\n" and exits with the script's status. The newlines around the
// markers keep them on lines of their own even after a banner or output
// without a final newline.
// REQUIRES: `script` is one line without a comment: it travels quoted
// through the user's login shell, and csh-family shells reject newlines
// inside quotes.
std::string FrameScript(const ShellFrame& frame, std::string_view script);

struct FramedOutput {
  // Both markers were found, in order: `body` is the command's output.
  bool complete = false;
  // Exactly what the script printed (without the framing newlines).
  std::string body;
  // What the shell printed around the frame (before it, then after it),
  // trimmed of surrounding blank space; "" for a quiet shell. When the begin
  // marker never came, all of the output.
  std::string noise;
};

// Splits a framed command's stdout. A missing end marker (the command was
// cut off) gives complete=false with the body read so far.
FramedOutput ParseFramedOutput(const ShellFrame& frame, std::string_view output);

// `text` shortened for a one-line message: blank space trimmed, newlines as
// " | ", at most `max_chars` characters (then "...").
std::string QuoteShellText(std::string_view text, size_t max_chars = 200);

}  // namespace cc
