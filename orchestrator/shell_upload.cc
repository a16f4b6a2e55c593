#include "orchestrator/shell_upload.h"

#include <cstdio>
#include <exception>
#include <string>

#include "orchestrator/framed_command.h"
#include "orchestrator/sha256.h"

namespace cc {

std::string ShellUploadScript(const std::string& remote_path, int mode,
                              long long size, const std::string& sha256_hex) {
  char octal[16];
  std::snprintf(octal, sizeof octal, "%o", static_cast<unsigned>(mode));
  // umask 077: the parents mkdir -p makes are 0700, like the SFTP path's.
  return "set -e\n"
         "umask 077\n"
         "p=" + ShellQuote(remote_path) + "\n"
         "mkdir -p -- \"$(dirname -- \"$p\")\"\n"
         "t=\"$p.tmp-sh-$$\"\n"
         "trap 'rm -f -- \"$t\"' EXIT\n"
         "cat >\"$t\"\n"
         "n=$(wc -c <\"$t\" | tr -d ' ')\n"
         "if [ \"$n\" != " + std::to_string(size) + " ]; then\n"
         "  echo \"received $n bytes of " + std::to_string(size) + "\" >&2; exit 1\n"
         "fi\n"
         "if command -v sha256sum >/dev/null 2>&1; then\n"
         "  s=$(sha256sum <\"$t\"); s=${s%% *}\n"
         "  if [ \"$s\" != " + sha256_hex + " ]; then\n"
         "    echo \"received sha256 $s, sent " + sha256_hex + "\" >&2; exit 1\n"
         "  fi\n"
         "fi\n"
         "chmod " + octal + " \"$t\"\n"
         "mv -f -- \"$t\" \"$p\"\n"
         "echo stored\n";
}

Status UploadThroughShell(Connection& c, const std::string& content,
                          const std::string& remote_path, int mode,
                          Deadline deadline) {
  std::string script =
      ShellUploadScript(remote_path, mode, static_cast<long long>(content.size()),
                        Sha256Hex(content));
  auto run = RunFramed(c, script, deadline, content);
  if (!run.ok()) return run.status().WithContext("upload through sh");
  if (run->output != "stored\n") {
    return Status::Protocol("upload through sh: the script did not confirm (said \"" +
                            run->output + "\")");
  }
  return Status::Ok();
}

Result<long long> FileSizeThroughShell(Connection& c, const std::string& remote_path,
                                       Deadline deadline) {
  std::string script = "p=" + ShellQuote(remote_path) +
                       "\nif [ -f \"$p\" ]; then wc -c <\"$p\"; else echo missing; fi\n";
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
