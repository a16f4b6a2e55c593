// Running Open MPI's mpirun on the controller, shared by the `mpi` stage
// and the `nccl` stage's mpirun launcher: finding it, checking that it is
// Open MPI's, running it under a deadline (its process group killed at the
// deadline or on Ctrl-C), and a private directory for its hostfile.
#pragma once

#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "orchestrator/run/stage.h"
#include "orchestrator/stages/mpi/mpi_launch.h"
#include "orchestrator/stages/mpi/mpi_oob.h"
#include "orchestrator/stages/mpi/mpirun_deadline.h"
#include "orchestrator/transport/transport.h"

namespace cc {

// The executable `name` on $PATH, "" when none.
std::string FindOnPath(const std::string& name);

// The deadlines below are on `clock`, the run's (StageContext::clock()).
// mpirun is a real process on this machine, waited for by poll(2) in real
// time, so a FakeClock, whose time would never pass, is for WatchMpirun's
// scripted processes only (fake_clock.h).

// "" when `mpirun` runs and says it is Open MPI's (*version gets its first
// line); else why it cannot be used.
std::string OpenMpiProblem(const std::string& mpirun, std::string* version, Clock& clock);

struct MpirunRun {
  std::vector<std::string> stdout_lines;
  std::vector<std::string> stderr_lines;
  bool hung = false;                         // stopped at a deadline (either one)
  MpirunStop stop = MpirunStop::kKeepGoing;  // which deadline, when hung
  std::string stop_why;                      // DecideMpirunStop's words
  int exit_code = -1;
  Status status;  // could not start at all, or interrupted
};

// Runs argv here under `d` (mpirun_deadline.h: every stdout line resets
// the idle deadline); at either deadline kills its process group.
MpirunRun RunMpirun(const std::vector<std::string>& argv, const MpirunDeadlines& d, Clock& clock);
// RunMpirun's part after the start: closes p's stdin, reads its lines until
// it exits or a deadline of `d` passes on `clock` (then kills it), and
// collects its exit code and stderr. Tests give a scripted process and a
// FakeClock.
MpirunRun WatchMpirun(RemoteProcess& p, const MpirunDeadlines& d, Clock& clock);
// The same with FixedMpirunDeadlines(timeout_s).
MpirunRun RunMpirun(const std::vector<std::string>& argv, double timeout_s, Clock& clock);

// A fresh directory under /tmp, removed with everything in it.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "clustercheck-mpi");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }  // "" when none was made
  Status Write(const std::string& name, const std::string& text) const;

 private:
  std::string path_;
};

// This machine's IPv4 interfaces (getifaddrs), loopback included; empty
// when they cannot be listed.
std::vector<LocalInterface> LocalIpv4Interfaces();

// Where mpirun's OOB channel goes (mpi_oob.h) for `nodes`: the setting, else
// the network this machine shares with the nodes' inventory addresses (an
// address that is a host name is resolved here, IPv4 only), else with their
// data addresses (the nics stage's NetworkChoice::address_of). Local runs
// need none: every rank is on this machine.
OobChoice ChooseMpiOob(const StageContext& ctx, const std::vector<const Node*>& nodes,
                       const std::string& setting);

// Open MPI's btl_tcp_if_include. The stage's own setting wins: an operator
// who names an interface means it; otherwise the nics stage's choice
// (NetworkChoice::btl_tcp_if_include; OOB is ChooseMpiOob's); otherwise ""
// (Open MPI tries every interface).
std::string BtlTcpInterface(const StageContext& ctx, const std::string& setting);

// Writes `hostfile_text` as hostfile<tag> in `dir` and, over ssh, an
// ssh_config<tag> for `hosts` (mpi_launch.h); sets o's hostfile,
// ssh_config and as_root (when this process is root).
Status PrepareMpirunFiles(const StageContext& ctx, const TempDir& dir,
                          const std::vector<MpiHost>& hosts, const std::string& tag,
                          const std::string& hostfile_text, MpirunOptions* o);

}  // namespace cc
