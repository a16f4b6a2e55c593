// `clustercheck run`: inventory -> fleet -> stages -> store -> summary.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "orchestrator/transport/transport.h"

namespace cc {

class StageContext;

// What `clustercheck burnin` adds to a run (orchestrator/burnin/).
struct RunHooks {
  // Continue this stored run instead of beginning one: its round-0 results
  // are replaced by the stages run now, its later rounds kept.
  int64_t resume_run = 0;
  // Runs after the stages (which are then the burn-in's round 0) while
  // the agents are still up; returns the exit code it asks for (>= 0) or -1.
  std::function<int(StageContext& ctx)> after_stages;
  // Prints after the run's own report.
  std::function<void(std::FILE* out)> after_report;
};

struct RunOptions {
  std::string inventory_path;
  std::string db_path;              // "" = DefaultStorePath()
  std::vector<std::string> stages;  // empty = inventory's, else default
  std::string limit;                // hostlist of nodes to keep, "" = all
  bool json = false;                // report --json's JSON instead of the summary
  int64_t rerun_failed = 0;         // only what failed in this run; 0 = off
  bool dry_run = false;             // print the plan, contact nothing
  int fanout = 0;                   // 0 = inventory's ssh.fanout
  // Every stage on every node, causes or not (Inventory::containment).
  bool no_containment = false;
  std::string agent_binary;  // "" = next to this executable
  // --set STAGE.KEY=VALUE, over the inventory's [stages.<stage>] tables.
  std::vector<std::string> settings;
  std::string argv;  // as typed, for the record
  bool color = false;
  bool progress_tty = false;
  std::FILE* out = stdout;
  std::FILE* err = stderr;
  // Tests inject a transport; nullptr = by the inventory's name.
  Transport* transport = nullptr;
  // Where the inventory's nodes_from_env is read: main gives the process's
  // (ProcessEnvironment); empty = no variable is set.
  Environment environment;
  RunHooks hooks;
};

// Returns the exit code (common/outcome.h): 0 ok, 1 failed or hung, 2 bad
// inventory or arguments, 3 too little of the cluster reached, 130 on
// SIGINT/SIGTERM (InterruptFlag()).
int RunClusterCheck(const RunOptions& options);

// "ssh" or "local"; nullptr for anything else.
std::unique_ptr<Transport> MakeTransport(const std::string& name);

}  // namespace cc
