// What an agent command sees: its arguments, the sysroot, and a way to
// answer. Commands are rows in the table in commands.cc, one file each
// (STYLE.md rule 6): adding a check is adding a file and a row.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agent/protocol.h"
#include "common/deadline.h"
#include "common/status.h"

namespace cc::agent {

using protocol::Json;

class CommandContext {
 public:
  virtual ~CommandContext() = default;
  // Root under which /proc, /sys and /etc are read ("" or "/" = the real
  // one). Tests point it at a fixture tree (node_exporter's --path.sysfs).
  virtual const std::string& root() const = 0;
  // root() + path, e.g. Path("/proc/meminfo").
  std::string Path(const std::string& abs) const {
    const std::string& r = root();
    if (r.empty() || r == "/") return abs;
    return r + abs;
  }
  virtual void Result(const std::string& name, const Json& data) = 0;
  virtual void Log(const std::string& level, const std::string& msg) = 0;
  virtual void Progress(int64_t done, int64_t total, const std::string& what) = 0;
  // For commands that run in phases: the next control line on stdin, or
  // nullopt when stdin closed (the controller went away: clean up and
  // return) or the deadline passed (check deadline.Passed()).
  virtual std::optional<Json> NextControl(Deadline deadline) = 0;
};

// Returns ok when the command ran (whatever it found); an error Status only
// when it could not run at all. Absent hardware is a finding, not an error.
using CommandFn = std::function<Status(const Json& args, CommandContext& ctx)>;

struct CommandEntry {
  const char* name;
  const char* summary;
  CommandFn run;
};

const std::vector<CommandEntry>& Commands();
const CommandEntry* FindCommand(const std::string& name);

}  // namespace cc::agent
