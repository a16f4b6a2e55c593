#include "orchestrator/transport/slurm_steps.h"

#include <cctype>
#include <set>

#include "orchestrator/transport/slurm_commands.h"

namespace cc {
namespace {

bool IsVariableName(const std::string& k) {
  if (k.empty() || std::isdigit(static_cast<unsigned char>(k[0]))) return false;
  for (char c : k) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

std::string SrunStepHostfile(const SlurmStep& step) {
  std::string text;
  for (const std::string& node : step.rank_nodes) text += node + "\n";
  return text;
}

Result<std::vector<std::string>> SrunStepArgv(const SlurmSettings& s, const SlurmStep& step) {
  if (step.job.empty()) return Status::BadArgument("a Slurm step needs the allocation's job id");
  if (step.rank_nodes.empty()) return Status::BadArgument("a Slurm step needs at least one rank");
  if (step.hostfile.empty()) return Status::BadArgument("a Slurm step needs its hostfile");
  if (step.program.empty() || step.program[0].empty()) {
    return Status::BadArgument("a Slurm step needs a program");
  }
  std::vector<std::string> argv = {"env", "SLURM_HOSTFILE=" + step.hostfile};
  for (const auto& [k, v] : step.env) {
    if (!IsVariableName(k)) return Status::BadArgument("'" + k + "' is not a variable name");
    argv.push_back(k + "=" + v);
  }
  std::set<std::string> nodes(step.rank_nodes.begin(), step.rank_nodes.end());
  std::vector<std::string> srun = {SlurmProgram(s, "srun"), "--jobid=" + step.job,
                                   // The agents' own step holds every node for the run's length.
                                   "--overlap", "-J", OwnStepName(), "-N",
                                   std::to_string(nodes.size()), "-n",
                                   std::to_string(step.rank_nodes.size()),
                                   // Rank r on the hostfile's r-th line, not in Slurm's node order.
                                   "--distribution=arbitrary", "--mpi=" + s.step_mpi,
                                   // A rank that fails is the probe's to report; Slurm must not end
                                   // the others before they have said which pair failed.
                                   "--kill-on-bad-exit=0", "--input=none",
                                   // Every line as the rank writes it: the deadlines count lines.
                                   "--unbuffered", "--label"};
  argv.insert(argv.end(), srun.begin(), srun.end());
  argv.insert(argv.end(), s.srun_args.begin(), s.srun_args.end());
  argv.insert(argv.end(), step.program.begin(), step.program.end());
  return argv;
}

std::string StripSrunLabel(const std::string& line, int* rank) {
  if (rank) *rank = -1;
  // srun pads the label to the width of the largest rank: "  7: ".
  size_t i = line.find_first_not_of(' ');
  size_t digits = i;
  while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
  if (i == std::string::npos || digits == i || digits - i > 9 || digits + 1 >= line.size() ||
      line[digits] != ':' || line[digits + 1] != ' ') {
    return line;
  }
  if (rank) *rank = std::stoi(line.substr(i, digits - i));
  return line.substr(digits + 2);
}

}  // namespace cc
