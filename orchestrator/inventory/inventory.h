// The host inventory: TOML (toml++) -> Inventory. Errors name the file,
// line, column and key path, and map to exit code 2.
//
//   name = "pod-a"
//   transport = "ssh"               # or "local", "slurm"
//   [ssh]  user, port, identity, host_key_policy, known_hosts, fanout,
//          connect_timeout_s, command_timeout_s, agent_dir, keepalive_s,
//          dial_back, dial_back_listen
//   [defaults]  env = {...}, library_paths = [...], gpus = 8, python = "..."
//   [[groups]]  name, nodes = ["gpu[001-016]"], + any node setting
//   [[nodes]]   name (or hostlist), address, + any node setting
//   [expect]    driver = "550.54.15", nccl = ">=2.18", ...
//   [stages]    run = ["facts", "parity"], containment = true;
//               [stages.<name>] settings
//   [slurm]     partition, reservation, account, time_limit, srun_args,
//               agent_path, agent_dir, listen, launch_timeout_s, ...
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace cc {

struct SshSettings {
  std::string user;      // default: ~/.ssh/config, then $USER
  int port = 22;         // default: ~/.ssh/config, then 22
  std::string identity;  // private key file; default: ssh-agent/config
  // "strict" (default): unknown or changed key -> node error;
  // "accept-new": learn unknown keys, refuse changed ones; "off": warn only.
  std::string host_key_policy = "strict";
  std::string known_hosts;  // default: ~/.ssh/known_hosts
  std::string config_file;  // default: ~/.ssh/config
  int fanout = 64;          // nodes in flight at once
  double connect_timeout_s = 10;
  double command_timeout_s = 60;
  double keepalive_s = 15;
  std::string agent_dir = "~/.cache/clustercheck";  // 0700, content-addressed
  // The agent ssh starts dials back to this machine over TCP and speaks its
  // protocol there (agent/dial_back.h); ssh carries only the start and the
  // agent's stderr. A controller then holds no ssh buffers for the agents'
  // answers: what makes hundreds of nodes fit in a few MB per node.
  // Unset, it is on for inventories of more than kDialBackAboveNodes nodes
  // over ssh (`dial_back_auto`), where an agent that cannot dial back
  // falls back to speaking over ssh; `dial_back = false` keeps ssh.
  bool dial_back = false;
  bool dial_back_given = false;  // the inventory set dial_back itself
  bool dial_back_auto = false;   // on because of the node count
  // Where they dial: "ADDR" or "ADDR:PORT" on this machine; "" = the
  // address this machine reaches the first node from, any port.
  std::string dial_back_listen;
};

// Past this many nodes an ssh controller holding every agent's answers in
// its libssh sessions outgrew 64 MB (229 MB at 256 simulated nodes, 60 MB
// at 128; with dial_back 60 MB at 256), so dial_back is on unless the
// inventory says otherwise.
inline constexpr size_t kDialBackAboveNodes = 128;

struct Node {
  std::string name;                        // as written or expanded from a hostlist
  std::string address;                     // default: name
  std::string group;                       // "" when not in a group
  SshSettings ssh;                         // inventory [ssh] merged with group/node overrides
  std::map<std::string, std::string> env;  // set for every agent run
  std::vector<std::string> library_paths;  // searched first for libnccl etc.
  std::optional<int> gpus;                 // expected GPU count
  std::string python;                      // torch facts when set
  std::string root = "/";                  // agent sysroot (tests)
  // Where to find the source location of this node's definition.
  int line = 0;
};

// [burnin]: how `clustercheck burnin` judges (orchestrator/burnin/).
struct BurnInSettings {
  // A pair check failing in a larger share of its rounds fails the
  // burn-in; at or under it, it is a `flaky` warning. 0: any failure fails.
  double max_failure_rate = 0;
};

// [slurm]: transport = "slurm" (orchestrator/transport/slurm_transport.h).
// Slurm starts the agents (srun) and copies them (sbcast); they dial back.
struct SlurmSettings {
  // For the allocation clustercheck asks for itself (outside salloc/sbatch).
  std::string partition, reservation, account;
  std::string time_limit = "30";       // salloc -t: minutes, or Slurm's forms
  std::vector<std::string> srun_args;  // added to every srun
  // A shared filesystem's agent: used where it is, nothing copied.
  std::string agent_path;
  // Node-local directory that sbcast copies the agent into.
  std::string agent_dir = "/tmp";
  // Where the agents dial back: "ADDR" or "ADDR:PORT" on this machine;
  // "" = the address this machine reaches the first node from, any port.
  std::string listen;
  double launch_timeout_s = 60;      // srun start to every agent's dial-back
  double allocation_timeout_s = 60;  // salloc --immediate
  // Directory of salloc, srun, sbcast, scancel, sinfo, squeue ("" = PATH).
  std::string bin_dir;
  // The MPI programs of the mpi and nccl stages start as Slurm steps of the
  // allocation (`srun --mpi=pmix -w A,B`) instead of mpirun over ssh, so
  // no ssh into the nodes is needed at all (slurm_steps.h).
  bool steps = false;
  // srun --mpi= for those steps: the PMI Slurm and the site's MPI share.
  std::string step_mpi = "pmix";
};

struct Inventory {
  std::string path;  // file it came from ("" for strings)
  std::string name;
  std::string transport = "ssh";  // "ssh" | "local" | "slurm"
  SshSettings ssh;
  std::vector<Node> nodes;  // in file order, expanded
  // [expect] field -> pin ("550.54.15" or ">=2.18").
  std::map<std::string, std::string> expect;
  // Stage names to run, in order; empty = the default list.
  std::vector<std::string> stages;
  // [stages] containment: a node or link with a cause an earlier stage
  // established is left out of later stages' cluster-wide jobs, and its
  // pairs there are skipped with the reason (StageContext::RecordCause).
  // false (or `run --no-containment`) runs everything on every node.
  bool containment = true;
  // [stages.<name>] tables, converted to JSON; validated against
  // StageSettingKeys() (stage_settings.h).
  std::map<std::string, nlohmann::json> stage_settings;
  BurnInSettings burnin;
  SlurmSettings slurm;
  // sha256 of the file's bytes, hex (for reports and diffs).
  std::string sha256;

  const Node* FindNode(const std::string& name) const;
  // Settings of one stage ({} when none were given).
  nlohmann::json StageSettings(const std::string& stage) const;
};

// One environment variable's value; nullopt when it is not set. The
// inventory's only view of the environment (nodes_from_env): main gives
// the process's (ProcessEnvironment), tests their own (EnvironmentOf).
using Environment = std::function<std::optional<std::string>(const std::string& name)>;
// getenv.
std::optional<std::string> ProcessEnvironment(const std::string& name);
// Exactly `vars`, nothing else set.
Environment EnvironmentOf(std::map<std::string, std::string> vars);

// Parses TOML text. `path` is used in messages only; nodes_from_env is read
// from `env` (none set when empty). On error: kBadInventory with
// "path:line:column: key.path: what is wrong".
Result<Inventory> ParseInventory(const std::string& text, const std::string& path,
                                 const Environment& env = {});
// Reads and parses a file (kBadInventory when it cannot be read, too).
Result<Inventory> LoadInventory(const std::string& path, const Environment& env);

// Keeps only the nodes whose names are in `names` (hostlist syntax, comma
// separated). kBadArgument naming any that the inventory lacks.
Status LimitNodes(Inventory& inventory, const std::string& hostlist);

}  // namespace cc
