#include "common/status.h"

namespace cc {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kOk:
      return "ok";
    case ErrorKind::kUnreachable:
      return "unreachable";
    case ErrorKind::kAuthFailed:
      return "auth-failed";
    case ErrorKind::kHostKeyMismatch:
      return "host-key-mismatch";
    case ErrorKind::kTimeout:
      return "timeout";
    case ErrorKind::kProtocol:
      return "protocol";
    case ErrorKind::kBadInventory:
      return "bad-inventory";
    case ErrorKind::kBadArgument:
      return "bad-argument";
    case ErrorKind::kIo:
      return "io";
    case ErrorKind::kNotFound:
      return "not-found";
    case ErrorKind::kEof:
      return "eof";
    case ErrorKind::kInterrupted:
      return "interrupted";
    case ErrorKind::kOutOfService:
      return "out-of-service";
    case ErrorKind::kLauncherRefused:
      return "launcher-refused";
    case ErrorKind::kInternal:
      return "internal";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(ErrorKindName(kind_)) + ": " + message_;
}

}  // namespace cc
