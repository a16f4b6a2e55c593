// The table of agent commands. One row per command; each lives in its own
// file (facts_*.cc, ports_*.cc, nccl_*.cc, health_command.cc).
#include "agent/command.h"
#include "agent/commands_decl.h"

namespace cc::agent {

const std::vector<CommandEntry>& Commands() {
  static const std::vector<CommandEntry> kCommands = {
      {"facts", "node facts: system, network, GPUs, libraries", RunFacts},
      {"sleep", "sleep for args.seconds (tests: a hung agent)", RunSleep},
      {"nics", "listen on each interface's address, probe peers' (TCP token, DF datagrams), stop",
       RunNics},
      {"ports", "listen on ports with a token, probe peers' ports, stop (phased)", RunPorts},
      {"nccl", "NCCL AllReduce on this process's GPUs: bandwidth, data check, NCCL log", RunNccl},
      {"nccl_id", "a NCCL unique id made in this process (tests)", RunNcclId},
      {"health", "GPU, kernel-log (Xid) and InfiniBand health: what says a node is degraded now",
       RunHealth},
  };
  return kCommands;
}

const CommandEntry* FindCommand(const std::string& name) {
  for (const auto& c : Commands()) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace cc::agent
