// How the `mpi` stage starts Open MPI: the hostfile, an ssh_config for
// mpirun's ssh (plm_rsh_agent) made from the inventory's ssh settings, and
// mpirun's argv. Pure: the stage writes the files and runs the command.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "orchestrator/inventory/inventory.h"

namespace cc {

struct MpiHost {
  std::string node;     // inventory name
  std::string address;  // what ssh and Open MPI reach it by
  SshSettings ssh;      // the node's merged ssh settings
};

// One "ADDRESS slots=1" line per host, in rank order (rank i runs on the
// i-th line), each after a comment naming the node.
std::string MpiHostfile(const std::vector<MpiHost>& hosts);

// An ssh_config for `ssh -F`: one Host block per address with its User,
// Port and IdentityFile, then the inventory's host key policy
// (StrictHostKeyChecking yes / accept-new / no), known_hosts, BatchMode and
// ConnectTimeout for all, then `Include` of the user's config file (when
// `include_config` is not empty) so that ProxyJump and the like still work.
std::string MpiSshConfig(const std::vector<MpiHost>& hosts, const SshSettings& all,
                         const std::string& include_config);

struct MpirunOptions {
  std::string mpirun = "mpirun";
  std::string hostfile;
  std::string ssh_config;  // "" for no plm_rsh_agent (local runs)
  int np = 0;
  bool as_root = false;            // adds --allow-run-as-root
  std::string map_by = "node";     // "slot": ranks fill a host's slots first
  std::string btl_tcp_if_include;  // "" = Open MPI chooses
  std::string oob_tcp_if_include;
  std::vector<std::string> extra_args;  // before the program
  std::string program;
  std::vector<std::string> program_args;
};

// mpirun --allow-run-as-root (when root) --hostfile H -np N --map-by MAP
//   --bind-to none --tag-output --mca plm_rsh_agent "ssh -F CFG"
//   --mca plm_rsh_no_tree_spawn 1 --mca orte_base_help_aggregate 0
//   [--mca btl_tcp_if_include X] [--mca oob_tcp_if_include Y]
//   EXTRA... PROGRAM ARGS...
// No tree spawn: only this machine needs to reach the nodes by ssh. Help
// messages unaggregated: each node's own warning, with its host name, is
// what names it. kBadArgument when np < 1, the program is empty, or the
// ssh_config path has white space (Open MPI splits plm_rsh_agent on it).
Result<std::vector<std::string>> MpirunArgv(const MpirunOptions& o);

}  // namespace cc
