// An agent that dialled back (dial_back_listener.h) as a RemoteProcess:
// its "stdin" and "stdout" are the one TCP connection, and CloseStdin()
// half-closes it, which the agent reads as the end of its input and exits.
// `launcher` (may be null) is what started it here, the srun of a Slurm
// step: its stderr is the agent's, Kill() stops it, and a line of it that
// says Slurm cancelled the step at its time limit turns the connection's
// end into kTimeout, so the stage records a `hang` and not a crash. With
// ssh dial_back the launcher is the ssh command that started the agent:
// it carries the agent's stderr, and Kill() closes it too.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "orchestrator/transport/transport.h"

namespace cc {

class SocketProcess : public RemoteProcess {
 public:
  // Takes `fd`. `name` is for messages ("gpu3's agent"). Without a
  // launcher of its own (the agents one srun started on every node),
  // `launcher_said` (may be empty) gives that shared srun's stderr.
  // `slurm_launcher`: the launcher is srun, whose last words (a time limit)
  // are worth waiting a moment for when the connection ends.
  SocketProcess(int fd, std::string name, std::unique_ptr<RemoteProcess> launcher,
                std::function<std::string()> launcher_said = {}, bool slurm_launcher = true);
  ~SocketProcess() override;

  Status WriteStdin(std::string_view data, Deadline deadline) override;
  void CloseStdin() override;
  Result<std::string> ReadLine(Deadline deadline) override;
  std::string StderrSoFar() override;
  // The launcher's exit; without one, 0 once the agent closed the
  // connection.
  Result<int> Wait(Deadline deadline) override;
  void Kill() override;

 private:
  // Waits up to `ms` for data and appends it; closes at EOF.
  void Pump(int ms);
  // Why the stream ended, worked out once (it may wait for srun's words).
  Status EndOfStream(const std::string& what);
  Status WhyItEnded(const std::string& what);

  int fd_;
  std::string name_;
  std::unique_ptr<RemoteProcess> launcher_;
  std::function<std::string()> launcher_said_;
  std::string buf_;
  bool eof_ = false;
  std::optional<Status> end_;
  bool write_closed_ = false;
  bool slurm_launcher_;
};

// Whether Slurm's words say it cancelled a step or job at its time limit
// ("*** STEP 42.0 ON n1 CANCELLED AT ... DUE TO TIME LIMIT ***"); the
// line when it does, "" when not.
std::string SlurmTimeLimitLine(const std::string& stderr_text);

}  // namespace cc
