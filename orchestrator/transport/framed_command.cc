#include "orchestrator/transport/framed_command.h"

#include <chrono>

#include "common/shell_frame.h"

namespace cc {
namespace {

double SecondsSince(Clock& clock, Clock::time_point t) {
  return std::chrono::duration<double>(clock.Now() - t).count();
}

std::string StderrTail(RemoteProcess& p) {
  std::string err = p.StderrSoFar();
  if (err.size() > 2000) err = err.substr(err.size() - 2000);
  while (!err.empty() && (err.back() == '\n' || err.back() == '\r')) err.pop_back();
  return err;
}

}  // namespace

Result<FramedRun> RunFramed(Connection& c, const std::string& script, Deadline deadline,
                            std::string_view input) {
  ShellFrame frame = NewShellFrame();
  // Measured on the caller's clock, the one its deadline is judged by.
  Clock& clock = deadline.clock();
  Clock::time_point start = clock.Now();
  auto started = c.Start(CommandLine{{"sh", "-c", FrameScript(frame, script)}, {}}, deadline);
  if (!started.ok()) return started.status();
  RemoteProcess& p = **started;
  if (!input.empty()) {
    Status w = p.WriteStdin(input, deadline);
    if (!w.ok()) {
      p.Kill();
      std::string err = StderrTail(p);
      return w.WithContext("writing to sh" + (err.empty() ? "" : " (stderr: " + err + ")"));
    }
  }
  p.CloseStdin();
  FramedRun run;
  std::string raw;
  bool begun = false;
  for (;;) {
    auto line = p.ReadLine(deadline);
    if (!line.ok()) {
      if (line.status().Is(ErrorKind::kEof)) break;
      p.Kill();
      return line.status().WithContext("sh");
    }
    if (!begun && *line == frame.begin) {
      begun = true;
      run.startup_s = SecondsSince(clock, start);
    }
    raw += *line;
    raw += '\n';
  }
  auto code = p.Wait(deadline);
  if (!code.ok()) {
    p.Kill();
    return code.status().WithContext("sh");
  }
  FramedOutput parsed = ParseFramedOutput(frame, raw);
  std::string noise =
      parsed.noise.empty() ? "" : " (the shell printed: " + QuoteShellText(parsed.noise) + ")";
  if (*code != 0) {
    std::string err = StderrTail(p);
    return Status::Io("sh exited with " + std::to_string(*code) + (err.empty() ? "" : ": " + err) +
                      noise);
  }
  if (!parsed.complete) {
    return Status::Protocol("sh exited 0 but its output ended before the end marker" + noise);
  }
  run.output = std::move(parsed.body);
  run.shell_noise = std::move(parsed.noise);
  return run;
}

}  // namespace cc
