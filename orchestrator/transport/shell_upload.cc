#include "orchestrator/transport/shell_upload.h"

#include <cstdio>
#include <exception>
#include <string>

#include "orchestrator/transport/framed_command.h"
#include "orchestrator/transport/sha256.h"

namespace cc {

std::string ShellUploadScript(const std::string& remote_path, int mode, long long size,
                              const std::string& sha256_hex) {
  char octal[16];
  std::snprintf(octal, sizeof octal, "%o", static_cast<unsigned>(mode));
  // umask 077: the parents mkdir -p makes are 0700, like the SFTP path's.
  // One line (see FrameScript).
  std::string n = std::to_string(size);
  return "set -e; umask 077; p=" + ShellQuote(remote_path) +
         "; mkdir -p -- \"$(dirname -- \"$p\")\"; t=\"$p.tmp-sh-$$\"; "
         "trap 'rm -f -- \"$t\"' EXIT; cat >\"$t\"; "
         "n=$(wc -c <\"$t\" | tr -d ' '); "
         "if [ \"$n\" != " +
         n + " ]; then echo \"received $n bytes of " + n +
         "\" >&2; exit 1; fi; "
         "if command -v sha256sum >/dev/null 2>&1; then s=$(sha256sum <\"$t\"); "
         "s=${s%% *}; if [ \"$s\" != " +
         sha256_hex + " ]; then echo \"received sha256 $s, sent " + sha256_hex +
         "\" >&2; exit 1; fi; fi; "
         "chmod " +
         octal + " \"$t\"; mv -f -- \"$t\" \"$p\"; echo stored";
}

Status UploadThroughShell(Connection& c, const std::string& content, const std::string& remote_path,
                          int mode, Deadline deadline) {
  std::string script = ShellUploadScript(remote_path, mode, static_cast<long long>(content.size()),
                                         Sha256Hex(content));
  auto run = RunFramed(c, script, deadline, content);
  if (!run.ok()) return run.status().WithContext("upload through sh");
  if (run->output != "stored\n") {
    return Status::Protocol("upload through sh: the script did not confirm (said \"" + run->output +
                            "\")");
  }
  return Status::Ok();
}

Result<long long> FileSizeThroughShell(Connection& c, const std::string& remote_path,
                                       Deadline deadline) {
  std::string script = "p=" + ShellQuote(remote_path) +
                       "; if [ -f \"$p\" ]; then wc -c <\"$p\"; else echo missing; fi";
  auto run = RunFramed(c, script, deadline);
  if (!run.ok()) return run.status().WithContext("file size through sh");
  std::string out = run->output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (out == "missing") {
    return Status::NotFound(c.Describe() + ": " + remote_path +
                            " does not exist or is not a regular file");
  }
  size_t used = 0;
  long long size = -1;
  try {
    size = std::stoll(out, &used);
  } catch (const std::exception&) {
  }
  if (size < 0 || used != out.size()) {
    return Status::Protocol("file size through sh: not a size: \"" + out + "\"");
  }
  return size;
}

}  // namespace cc
