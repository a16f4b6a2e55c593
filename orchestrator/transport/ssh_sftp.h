// File transfer for SshTransport over SFTP: atomic uploads (temporary name,
// chmod, rename) into 0700 directories, and file sizes.
//
// Renaming over an existing file: SFTP v3 (OpenSSH) refuses to, and libssh
// 0.10 has no call for OpenSSH's posix-rename@openssh.com extension. So a
// refused rename onto an existing target is retried as `mv -f` through the
// shell (atomic rename(2)); when that fails too, the target is unlinked and
// the rename repeated (not atomic, but content-addressed agents make the
// window harmless).
#pragma once

#include <libssh/sftp.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/deadline.h"
#include "common/status.h"
#include "orchestrator/transport/ssh_session.h"

namespace cc {

// The path as SFTP wants it: "~/a/b" -> "a/b" (an SFTP session starts in
// the home directory), "~" -> "."; others unchanged.
std::string SftpPath(const std::string& remote_path);

// The directories above `path`, outermost first, without "/" and ".":
// "a/b/c" -> {"a", "a/b"}; "/x/y/z" -> {"/x", "/x/y"}.
std::vector<std::string> ParentDirectories(const std::string& path);

// Whether an error of SshSftp::Upload or FileSize says that SFTP itself did
// not start (no subsystem, or a handshake garbled by a talking login shell)
// on a connection that still works, so a command channel may do the job.
bool IsSftpHandshakeFailure(const Status& s);

class SshSftp {
 public:
  // Replaces `to` with `from` atomically by other means (the shell).
  using RenameOver =
      std::function<Status(const std::string& from, const std::string& to, Deadline)>;

  SshSftp(std::shared_ptr<SshSession> session, std::string where);
  ~SshSftp();
  SshSftp(const SshSftp&) = delete;
  SshSftp& operator=(const SshSftp&) = delete;

  // See Connection::Upload. `rename_over` is the fallback described above.
  Status Upload(const std::string& content, const std::string& remote_path, int mode,
                Deadline deadline, const RenameOver& rename_over);
  // See Connection::FileSize: kNotFound when absent or not a regular file.
  Result<long long> FileSize(const std::string& remote_path, Deadline deadline);

 private:
  Status Open(Deadline deadline);
  Status MakeParents(const std::string& path, Deadline deadline);
  Status WriteTemp(const std::string& tmp, const std::string& content, Deadline deadline);
  Status Rename(const std::string& tmp, const std::string& path, Deadline deadline,
                const RenameOver& rename_over);
  // An error for a failed SFTP call: kTimeout past the deadline, the SFTP
  // status in words otherwise.
  Status Fail(const std::string& doing, Deadline deadline) const;
  // Fail, but kProtocol (IsSftpHandshakeFailure) when the connection lives.
  Status HandshakeFail(const std::string& doing, Deadline deadline) const;

  std::shared_ptr<SshSession> session_;
  std::string where_;
  sftp_session sftp_ = nullptr;  // opened on first use, kept
};

}  // namespace cc
