#include "orchestrator/transport/transport.h"

namespace cc {

std::string ShellQuote(std::string_view s) {
  // "~/x" stays expandable: the remote shell must see the tilde unquoted.
  if (s.rfind("~/", 0) == 0) return "~/" + ShellQuote(s.substr(2));
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += "'";
  return out;
}

std::string ShellQuoteCommand(const CommandLine& cmd) {
  std::string out;
  if (!cmd.env.empty()) {
    out = "env";
    for (const auto& [k, v] : cmd.env) out += " " + ShellQuote(k + "=" + v);
    out += " ";
  }
  for (size_t i = 0; i < cmd.argv.size(); ++i) {
    if (i) out += " ";
    out += ShellQuote(cmd.argv[i]);
  }
  return out;
}

Result<std::string> RunToCompletion(Connection& c, const CommandLine& cmd, Deadline deadline) {
  auto started = c.Start(cmd, deadline);
  if (!started.ok()) return started.status();
  RemoteProcess& p = **started;
  p.CloseStdin();
  std::string out;
  for (;;) {
    auto line = p.ReadLine(deadline);
    if (!line.ok()) {
      if (line.status().Is(ErrorKind::kEof)) break;
      p.Kill();
      return line.status().WithContext(cmd.argv.empty() ? "" : cmd.argv[0]);
    }
    out += *line;
    out += '\n';
  }
  auto code = p.Wait(deadline);
  if (!code.ok()) {
    p.Kill();
    return code.status();
  }
  if (*code != 0) {
    std::string err = p.StderrSoFar();
    if (err.size() > 2000) err = err.substr(err.size() - 2000);
    return Status::Io((cmd.argv.empty() ? std::string("command") : cmd.argv[0]) + " exited with " +
                      std::to_string(*code) + (err.empty() ? "" : ": " + err));
  }
  return out;
}

}  // namespace cc
