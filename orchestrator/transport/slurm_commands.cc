#include "orchestrator/transport/slurm_commands.h"

#include <unistd.h>

#include <sstream>

#include "common/hostlist.h"

namespace cc {
namespace {

// The name of the allocation clustercheck asks for itself.
constexpr char kJobName[] = "clustercheck";

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string SlurmProgram(const SlurmSettings& s, const std::string& program) {
  if (s.bin_dir.empty()) return program;
  std::string dir = s.bin_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir + "/" + program;
}

std::map<std::string, SlurmNodeState> ParseSinfoNodes(const std::string& out) {
  std::map<std::string, SlurmNodeState> nodes;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    size_t a = line.find('|');
    size_t b = a == std::string::npos ? a : line.find('|', a + 1);
    if (b == std::string::npos) continue;
    std::string name = line.substr(0, a);
    if (name.empty() || nodes.count(name)) continue;
    nodes[name] = {line.substr(a + 1, b - a - 1), line.substr(b + 1)};
  }
  return nodes;
}

SlurmAvailability AvailabilityOf(const SlurmNodeState& s) {
  const std::string st = Lower(s.state);
  // "drained", "draining", "drain" (and "drained*": drained and not
  // responding is still the site's decision first).
  if (st.find("drain") != std::string::npos) return SlurmAvailability::kDrained;
  if (st.find("down") != std::string::npos || st.find("fail") != std::string::npos ||
      st.find("not_responding") != std::string::npos || (!st.empty() && st.back() == '*')) {
    return SlurmAvailability::kDown;
  }
  return SlurmAvailability::kUsable;
}

std::string DescribeSlurmState(const SlurmNodeState& s) {
  std::string reason = s.reason.empty() || s.reason == "none" ? "" : ": " + s.reason;
  switch (AvailabilityOf(s)) {
    case SlurmAvailability::kDrained:
      return "drained in Slurm (" + s.state + ")" + (reason.empty() ? ", no reason given" : reason);
    case SlurmAvailability::kDown:
      return "down in Slurm (" + s.state + ")" + reason;
    case SlurmAvailability::kUsable:
      break;
  }
  return s.state + reason;
}

std::vector<std::string> SinfoArgv(const SlurmSettings& s, const std::vector<std::string>& nodes) {
  return {SlurmProgram(s, "sinfo"), "-h", "-N", "-n", FoldHostlist(nodes), "-o", "%N|%T|%E"};
}

std::vector<std::string> SallocArgv(const SlurmSettings& s, const std::vector<std::string>& nodes) {
  std::vector<std::string> argv = {
      SlurmProgram(s, "salloc"),
      "--no-shell",
      "-J",
      kJobName,
      "-N",
      std::to_string(nodes.size()),
      "-w",
      FoldHostlist(nodes),
      "--immediate=" + std::to_string(static_cast<long long>(s.allocation_timeout_s + 0.5)),
      "-t",
      s.time_limit};
  if (!s.partition.empty()) argv.insert(argv.end(), {"-p", s.partition});
  if (!s.reservation.empty()) argv.push_back("--reservation=" + s.reservation);
  if (!s.account.empty()) argv.insert(argv.end(), {"-A", s.account});
  return argv;
}

std::optional<std::string> GrantedJobId(const std::string& err) {
  const std::string key = "Granted job allocation ";
  size_t at = err.find(key);
  if (at == std::string::npos) return std::nullopt;
  size_t start = at + key.size(), end = start;
  while (end < err.size() && std::isdigit(static_cast<unsigned char>(err[end]))) ++end;
  if (end == start) return std::nullopt;
  return err.substr(start, end - start);
}

std::vector<std::string> SbcastArgv(const SlurmSettings& s, const std::string& job,
                                    const std::string& source, const std::string& dest) {
  return {SlurmProgram(s, "sbcast"), "-j", job, "-f", source, dest};
}

std::vector<std::string> SrunAgentsArgv(const SlurmSettings& s, const std::string& job,
                                        const std::vector<std::string>& nodes,
                                        const std::vector<std::string>& agent_argv) {
  std::vector<std::string> argv = {SlurmProgram(s, "srun"), "--jobid=" + job, "--overlap", "-J",
                                   OwnStepName(), "-N", std::to_string(nodes.size()), "-n",
                                   std::to_string(nodes.size()), "--ntasks-per-node=1", "-w",
                                   FoldHostlist(nodes),
                                   // One agent failing must not take the others down.
                                   "--kill-on-bad-exit=0", "--input=none"};
  argv.insert(argv.end(), s.srun_args.begin(), s.srun_args.end());
  argv.insert(argv.end(), agent_argv.begin(), agent_argv.end());
  return argv;
}

std::vector<std::string> ScancelArgv(const SlurmSettings& s, const std::string& job_or_step) {
  return {SlurmProgram(s, "scancel"), job_or_step};
}

std::string RunStepName(long pid) { return "clustercheck-" + std::to_string(pid); }

const std::string& OwnStepName() {
  static const std::string name = RunStepName(static_cast<long>(getpid()));
  return name;
}

std::vector<std::string> SqueueStepsArgv(const SlurmSettings& s, const std::string& job) {
  return {SlurmProgram(s, "squeue"), "-h", "-s", "-j", job, "-o", "%i|%j"};
}

std::vector<std::string> StepsNamed(const std::string& out, const std::string& name) {
  std::vector<std::string> ids;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    size_t bar = line.find('|');
    if (bar == std::string::npos || bar == 0) continue;
    std::string id = line.substr(0, bar);
    while (!id.empty() && id.front() == ' ') id.erase(0, 1);
    // Only steps (JOB.STEP): never the job itself, whatever its name.
    if (id.find('.') == std::string::npos) continue;
    if (line.substr(bar + 1) == name) ids.push_back(id);
  }
  return ids;
}

std::string SlurmErrorLines(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.find("error:") == std::string::npos && line.find("fatal:") == std::string::npos) {
      continue;
    }
    out += (out.empty() ? "" : "; ") + line;
    if (out.size() > 2000) break;
  }
  return out;
}

}  // namespace cc
