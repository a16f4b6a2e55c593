// Status and Result<T>: how errors travel (STYLE.md rule 4).
//
// A Status is ok or carries a named kind, a message and optional context
// (node, step). A *failed check* is not an error: it is a stored verdict.
// Errors are for things that could not be tested or could not run.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace cc {

enum class ErrorKind {
  kOk = 0,
  kUnreachable,      // could not connect to the node
  kAuthFailed,       // the node refused our credentials
  kHostKeyMismatch,  // unknown or changed host key under `strict`
  kTimeout,          // a deadline passed
  kProtocol,         // the agent said something we do not understand
  kBadInventory,     // the inventory file is wrong (exit code 2)
  kBadArgument,      // the command line or a request is wrong
  kIo,               // a local file or process operation failed
  kNotFound,         // a file, library or symbol is absent
  kEof,              // a stream ended
  kInterrupted,      // SIGINT/SIGTERM
  kInternal,
  kOutOfService,     // the site's scheduler took the node out (Slurm drain): not ours to test
  kLauncherRefused,  // the site's launcher (srun, salloc) refused the request
};

const char* ErrorKindName(ErrorKind kind);

class Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(ErrorKind kind, std::string message) {
    return Status(kind, std::move(message));
  }
  static Status Unreachable(std::string m) { return Error(ErrorKind::kUnreachable, std::move(m)); }
  static Status AuthFailed(std::string m) { return Error(ErrorKind::kAuthFailed, std::move(m)); }
  static Status HostKeyMismatch(std::string m) {
    return Error(ErrorKind::kHostKeyMismatch, std::move(m));
  }
  static Status Timeout(std::string m) { return Error(ErrorKind::kTimeout, std::move(m)); }
  static Status Protocol(std::string m) { return Error(ErrorKind::kProtocol, std::move(m)); }
  static Status BadInventory(std::string m) {
    return Error(ErrorKind::kBadInventory, std::move(m));
  }
  static Status BadArgument(std::string m) { return Error(ErrorKind::kBadArgument, std::move(m)); }
  static Status Io(std::string m) { return Error(ErrorKind::kIo, std::move(m)); }
  static Status NotFound(std::string m) { return Error(ErrorKind::kNotFound, std::move(m)); }
  static Status Eof(std::string m) { return Error(ErrorKind::kEof, std::move(m)); }
  static Status Interrupted(std::string m) { return Error(ErrorKind::kInterrupted, std::move(m)); }
  static Status Internal(std::string m) { return Error(ErrorKind::kInternal, std::move(m)); }

  bool ok() const { return kind_ == ErrorKind::kOk; }
  ErrorKind kind() const { return kind_; }
  bool Is(ErrorKind k) const { return kind_ == k; }
  const std::string& message() const { return message_; }

  // Returns a copy with "context: " put in front of the message, e.g. the
  // node and step ("gpu003: push: ...").
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(kind_, context + ": " + message_);
  }
  // "timeout: gpu003: hello: no answer within 10s"
  std::string ToString() const;

 private:
  Status(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  ErrorKind kind_ = ErrorKind::kOk;
  std::string message_;
};

// Result<T>: a value or a non-ok Status.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}  // NOLINT
  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace cc
