// The libssh layer under SshTransport: one owned ssh_session, libssh's
// timeout for blocking calls, and a watchdog that ends any blocking libssh
// call shortly after its deadline.
//
// Threading: libssh (>= 0.8, pthread threads by default) is thread-safe
// across sessions once ssh_init() ran; a single session must be used by one
// thread at a time. SshTransport keeps to that: each Connection owns one
// session, and a Connection and its processes are used by one thread at a
// time (transport.h). The watchdog thread touches only the socket
// (shutdown(2)), never libssh state.
#pragma once

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include <cstdint>
#include <string>

#include "common/deadline.h"

namespace cc {

// Calls ssh_init() once per process; safe from any thread.
void EnsureLibsshInitialized();

// Owns an ssh_session. Channels and SFTP sessions made from it must be freed
// first, so SshProcess and SshSftp hold a shared_ptr to it.
class SshSession {
 public:
  SshSession();
  ~SshSession();
  SshSession(const SshSession&) = delete;
  SshSession& operator=(const SshSession&) = delete;

  ssh_session get() const { return session_; }
  // libssh's last error on this session.
  std::string Error() const;
  // Makes libssh's blocking calls give up when `deadline` passes: never
  // before it, at most 2 ms after (at least 1 ms from now: libssh reads 0 as
  // "the default", 10 s or forever).
  void SetTimeout(Deadline deadline);
  // True once the watchdog cut the socket; every later call fails.
  bool broken() const { return broken_; }
  void MarkBroken() { broken_ = true; }

 private:
  ssh_session session_;
  // Answers "no passphrase" so that an encrypted key is skipped instead of
  // OpenSSL prompting on the terminal. Lives as long as the session.
  ssh_callbacks_struct callbacks_{};
  bool broken_ = false;
};

// Guards one blocking libssh call: sets the session's timeout to the
// deadline and, should libssh still be inside the call a little after the
// deadline (libssh 0.10's SFTP reads retry on timeout), shuts the socket
// down so that the call fails. The session is then marked broken.
class BlockingCall {
 public:
  BlockingCall(SshSession& session, Deadline deadline);
  ~BlockingCall();
  BlockingCall(const BlockingCall&) = delete;
  BlockingCall& operator=(const BlockingCall&) = delete;

 private:
  SshSession& session_;
  uint64_t ticket_ = 0;  // 0: nothing armed (no socket yet)
};

// How long after a deadline the watchdog cuts a socket: libssh's own
// timeout, set to the same deadline, normally ends the call first. Cutting
// takes the whole session with it (every agent and command on it), so the
// grace must outlast a thread that is merely late to run: at 256 simulated
// nodes (load 287 on 2 cores) 300 ms cut three healthy nodes' sessions,
// whose ports stage then called them lost. The watchdog is for calls that
// never return on their own (libssh 0.10's SFTP reads retry on timeout);
// for those 2 s more is little.
inline constexpr Millis kWatchdogGrace{2000};

}  // namespace cc
