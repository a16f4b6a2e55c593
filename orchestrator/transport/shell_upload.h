// Uploading a file over a command channel, for nodes where SFTP does not
// work: a login shell that prints on startup corrupts the SFTP stream when
// sshd runs an external sftp-server through it, and some sites disable the
// subsystem. The content goes to `cat` on stdin; the script (framed, see
// framed_command.h) checks its size and SHA-256 before the atomic rename, so
// a truncated or garbled transfer never takes the content-addressed name.
#pragma once

#include <string>

#include "common/deadline.h"
#include "common/status.h"
#include "orchestrator/transport/transport.h"

namespace cc {

// The sh script that stores its stdin at `remote_path` ("~/" = home) with
// `mode`: missing parents made 0700, a temporary name beside the target,
// size and SHA-256 checked (size only where sha256sum is missing), then
// `mv -f` (rename(2)). Prints "stored" on success; on a mismatch it removes
// the temporary file and exits 1 with what it got on stderr.
std::string ShellUploadScript(const std::string& remote_path, int mode, long long size,
                              const std::string& sha256_hex);

// Connection::Upload over `c.Start` with the script above.
// Errors: RunFramed's (kIo with the script's complaint, kTimeout); kProtocol
// when the script did not confirm.
Status UploadThroughShell(Connection& c, const std::string& content, const std::string& remote_path,
                          int mode, Deadline deadline);

// Connection::FileSize over a command channel: the size of the regular
// file at `remote_path`, kNotFound when there is none.
Result<long long> FileSizeThroughShell(Connection& c, const std::string& remote_path,
                                       Deadline deadline);

}  // namespace cc
