// A command running on a node over one SSH "session" channel.
//
// Reads never block inside libssh: ReadLine, Wait and WriteStdin drain
// whatever has arrived on stdout and stderr (so neither stream can stall the
// other, nor the remote behind a full window), then poll the socket in short
// slices until the deadline.
//
// Killing: sshd runs the command without a pty, so closing the channel does
// not signal it. Kill() asks sshd to send SIGKILL ("signal" request, honoured
// by OpenSSH >= 7.9) and closes the channel; the agent also exits on its own
// when its stdin closes, which is the design that does not depend on either.
#pragma once

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include <memory>
#include <optional>
#include <string>

#include "orchestrator/transport/ssh_session.h"
#include "orchestrator/transport/transport.h"

namespace cc {

class SshProcess : public RemoteProcess {
 public:
  // Opens a channel and execs `command` (already shell-quoted) in the remote
  // user's shell. `where` names the node in messages ("ssh root@h:22").
  static Result<std::unique_ptr<RemoteProcess>> Start(std::shared_ptr<SshSession> session,
                                                      const std::string& command,
                                                      const std::string& where, Deadline deadline);
  ~SshProcess() override;

  Status WriteStdin(std::string_view data, Deadline deadline) override;
  void CloseStdin() override;
  Result<std::string> ReadLine(Deadline deadline) override;
  std::string StderrSoFar() override { return err_; }
  Result<int> Wait(Deadline deadline) override;
  void Kill() override;

 private:
  SshProcess(std::shared_ptr<SshSession> session, ssh_channel channel, std::string where);
  // Moves what has arrived into out_/err_ without blocking. Sets
  // *progressed when something new came (data, EOF or an exit status).
  Status Pump(bool* progressed);
  // Pump, and when nothing new came, waits for the socket (at most a short
  // slice, and never past the deadline).
  Status WaitForData(Deadline deadline);
  Status Lost(const std::string& doing) const;
  void AppendStderr(const char* data, size_t n);

  static void OnExitStatus(ssh_session, ssh_channel, int status, void* self);
  static void OnExitSignal(ssh_session, ssh_channel, const char* signal, int, const char*,
                           const char*, void* self);

  std::shared_ptr<SshSession> session_;
  ssh_channel channel_;
  std::string where_;
  ssh_channel_callbacks_struct callbacks_{};
  std::string out_;  // stdout not yet returned as lines
  std::string err_;  // the last kStderrKeep bytes of stderr
  bool out_eof_ = false;
  bool stdin_closed_ = false;
  bool killed_ = false;
  std::optional<int> exit_code_;
};

// Exit code for a process killed by the named signal ("KILL" -> 137), as a
// shell reports it; 128 + 0 for names it does not know.
int ExitCodeForSignal(const std::string& name);

}  // namespace cc
