#include "orchestrator/transport/ssh_sftp.h"

#include <fcntl.h>

#include <cstdio>
#include <random>

namespace cc {
namespace {

constexpr size_t kWriteChunk = 32 * 1024;

const char* SftpErrorName(int code) {
  switch (code) {
    case SSH_FX_OK:
      return "ok (the connection failed)";
    case SSH_FX_EOF:
      return "end of file";
    case SSH_FX_NO_SUCH_FILE:
      return "no such file";
    case SSH_FX_PERMISSION_DENIED:
      return "permission denied";
    case SSH_FX_FAILURE:
      return "failure";
    case SSH_FX_BAD_MESSAGE:
      return "bad message";
    case SSH_FX_NO_CONNECTION:
      return "no connection";
    case SSH_FX_CONNECTION_LOST:
      return "connection lost";
    case SSH_FX_OP_UNSUPPORTED:
      return "operation unsupported";
    case SSH_FX_FILE_ALREADY_EXISTS:
      return "file already exists";
    case SSH_FX_WRITE_PROTECT:
      return "write protected";
    case SSH_FX_NO_MEDIA:
      return "no media";
    default:
      return "sftp error";
  }
}

std::string RandomSuffix() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

struct AttributesDeleter {
  void operator()(sftp_attributes a) const { sftp_attributes_free(a); }
};
using Attributes = std::unique_ptr<sftp_attributes_struct, AttributesDeleter>;

}  // namespace

std::string SftpPath(const std::string& remote_path) {
  if (remote_path == "~" || remote_path == "~/") return ".";
  if (remote_path.rfind("~/", 0) == 0) return remote_path.substr(2);
  return remote_path;
}

std::vector<std::string> ParentDirectories(const std::string& path) {
  std::vector<std::string> out;
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    std::string dir = path.substr(0, pos);
    if (dir.empty() || dir == "." || dir.back() == '/') continue;
    out.push_back(dir);
  }
  return out;
}

SshSftp::SshSftp(std::shared_ptr<SshSession> session, std::string where)
    : session_(std::move(session)), where_(std::move(where)) {}

SshSftp::~SshSftp() {
  if (sftp_ == nullptr) return;
  BlockingCall bounded(*session_, Deadline::In(Millis(2000)));
  sftp_free(sftp_);
}

Status SshSftp::Fail(const std::string& doing, Deadline deadline) const {
  if (deadline.Passed()) return Status::Timeout(where_ + ": sftp: " + doing + ": deadline passed");
  if (session_->broken() || !ssh_is_connected(session_->get())) {
    return Status::Unreachable(where_ + ": sftp: " + doing +
                               ": connection lost: " + session_->Error());
  }
  int code = sftp_ != nullptr ? sftp_get_error(sftp_) : SSH_FX_OK;
  if (code == SSH_FX_OK) return Status::Io(where_ + ": sftp: " + doing + ": " + session_->Error());
  return Status::Io(where_ + ": sftp: " + doing + ": " + SftpErrorName(code));
}

bool IsSftpHandshakeFailure(const Status& s) { return s.Is(ErrorKind::kProtocol); }

Status SshSftp::HandshakeFail(const std::string& doing, Deadline deadline) const {
  Status s = Fail(doing, deadline);
  // Only a live connection can still carry a command channel.
  if (!s.Is(ErrorKind::kIo)) return s;
  return Status::Protocol(s.message());
}

Status SshSftp::Open(Deadline deadline) {
  if (session_->broken()) {
    return Status::Unreachable(where_ + ": connection was cut at an earlier deadline");
  }
  if (sftp_ != nullptr) return Status::Ok();
  session_->SetTimeout(deadline);
  sftp_session s = sftp_new(session_->get());
  if (s == nullptr) return HandshakeFail("cannot start the sftp subsystem", deadline);
  session_->SetTimeout(deadline);
  if (sftp_init(s) != SSH_OK) {
    sftp_free(s);
    return HandshakeFail("sftp handshake failed (does the login shell print on startup?)",
                         deadline);
  }
  sftp_ = s;
  return Status::Ok();
}

Status SshSftp::MakeParents(const std::string& path, Deadline deadline) {
  for (const std::string& dir : ParentDirectories(path)) {
    session_->SetTimeout(deadline);
    Attributes a(sftp_stat(sftp_, dir.c_str()));
    if (a == nullptr) {
      if (sftp_get_error(sftp_) != SSH_FX_NO_SUCH_FILE) return Fail("stat " + dir, deadline);
      session_->SetTimeout(deadline);
      if (sftp_mkdir(sftp_, dir.c_str(), 0700) == 0) continue;
      // Another uploader may have made it meanwhile (EEXIST).
      session_->SetTimeout(deadline);
      a.reset(sftp_stat(sftp_, dir.c_str()));
      if (a == nullptr) return Fail("mkdir " + dir, deadline);
    }
    if (a->type != SSH_FILEXFER_TYPE_DIRECTORY) {
      return Status::Io(where_ + ": " + dir + " exists and is not a directory");
    }
  }
  return Status::Ok();
}

Status SshSftp::WriteTemp(const std::string& tmp, const std::string& content, Deadline deadline) {
  session_->SetTimeout(deadline);
  sftp_file f = sftp_open(sftp_, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (f == nullptr) return Fail("create " + tmp, deadline);
  Status result;
  for (size_t off = 0; off < content.size();) {
    size_t n = std::min(kWriteChunk, content.size() - off);
    session_->SetTimeout(deadline);
    ssize_t w = sftp_write(f, content.data() + off, n);
    if (w <= 0) {
      result = Fail("write " + tmp, deadline);
      break;
    }
    off += static_cast<size_t>(w);
  }
  session_->SetTimeout(deadline);
  if (sftp_close(f) != SSH_NO_ERROR && result.ok()) result = Fail("close " + tmp, deadline);
  return result;
}

Status SshSftp::Rename(const std::string& tmp, const std::string& path, Deadline deadline,
                       const RenameOver& rename_over) {
  session_->SetTimeout(deadline);
  if (sftp_rename(sftp_, tmp.c_str(), path.c_str()) == 0) return Status::Ok();
  Status refused = Fail("rename " + tmp + " to " + path, deadline);
  if (deadline.Passed() || session_->broken()) return refused;
  session_->SetTimeout(deadline);
  Attributes existing(sftp_stat(sftp_, path.c_str()));
  if (existing == nullptr) return refused;  // not the overwrite case
  if (rename_over && rename_over(tmp, path, deadline).ok()) return Status::Ok();
  session_->SetTimeout(deadline);
  sftp_unlink(sftp_, path.c_str());
  session_->SetTimeout(deadline);
  if (sftp_rename(sftp_, tmp.c_str(), path.c_str()) == 0) return Status::Ok();
  return Fail("rename " + tmp + " over " + path, deadline);
}

Status SshSftp::Upload(const std::string& content, const std::string& remote_path, int mode,
                       Deadline deadline, const RenameOver& rename_over) {
  std::string path = SftpPath(remote_path);
  if (path.empty() || path == "." || path.back() == '/') {
    return Status::BadArgument(where_ + ": upload target \"" + remote_path +
                               "\" is not a file path");
  }
  BlockingCall bounded(*session_, deadline);
  Status s = Open(deadline);
  if (!s.ok()) return s;
  s = MakeParents(path, deadline);
  if (!s.ok()) return s;
  std::string tmp = path + ".tmp-" + RandomSuffix();
  s = WriteTemp(tmp, content, deadline);
  if (s.ok()) {
    session_->SetTimeout(deadline);
    if (sftp_chmod(sftp_, tmp.c_str(), static_cast<mode_t>(mode)) != 0) {
      s = Fail("chmod " + tmp, deadline);
    }
  }
  if (s.ok()) s = Rename(tmp, path, deadline, rename_over);
  if (!s.ok() && !session_->broken() && !deadline.Passed()) {
    session_->SetTimeout(deadline);
    sftp_unlink(sftp_, tmp.c_str());
  }
  return s;
}

Result<long long> SshSftp::FileSize(const std::string& remote_path, Deadline deadline) {
  std::string path = SftpPath(remote_path);
  BlockingCall bounded(*session_, deadline);
  Status s = Open(deadline);
  if (!s.ok()) return s;
  session_->SetTimeout(deadline);
  Attributes a(sftp_stat(sftp_, path.c_str()));
  if (a == nullptr) {
    if (!deadline.Passed() && !session_->broken() && sftp_get_error(sftp_) == SSH_FX_NO_SUCH_FILE) {
      return Status::NotFound(where_ + ": " + remote_path + " does not exist");
    }
    return Fail("stat " + remote_path, deadline);
  }
  if (a->type != SSH_FILEXFER_TYPE_REGULAR) {
    return Status::NotFound(where_ + ": " + remote_path + " is not a regular file");
  }
  return static_cast<long long>(a->size);
}

}  // namespace cc
