#include "orchestrator/stages/mpi/mpirun_exec.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "orchestrator/run/stage.h"
#include "orchestrator/transport/local_transport.h"

namespace cc {
namespace {

constexpr double kVersionTimeoutS = 15;

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    out.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return out;
}

}  // namespace

std::string FindOnPath(const std::string& name) {
  const char* path = getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    std::string dir = p.substr(start, end - start);
    std::string cand = (dir.empty() ? "." : dir) + "/" + name;
    if (access(cand.c_str(), X_OK) == 0) return cand;
    start = end + 1;
  }
  return "";
}

std::string OpenMpiProblem(const std::string& mpirun, std::string* version, Clock& clock) {
  if (access(mpirun.c_str(), X_OK) != 0) return "mpirun " + mpirun + " is not executable";
  LocalConnection here;
  auto v = RunToCompletion(here, CommandLine{{mpirun, "--version"}, {}},
                           Deadline::InSeconds(clock, kVersionTimeoutS));
  if (!v.ok()) return mpirun + " --version failed: " + v.status().ToString();
  if (v->find("Open MPI") == std::string::npos) {
    return mpirun + " is not Open MPI's (" + v->substr(0, v->find('\n')) + ")";
  }
  *version = v->substr(0, v->find('\n'));
  return "";
}

MpirunRun RunMpirun(const std::vector<std::string>& argv, double timeout_s, Clock& clock) {
  return RunMpirun(argv, FixedMpirunDeadlines(timeout_s), clock);
}

MpirunRun RunMpirun(const std::vector<std::string>& argv, const MpirunDeadlines& d, Clock& clock) {
  LocalConnection here;
  auto p = here.Start(CommandLine{argv, {}}, Deadline::InSeconds(clock, d.total_s));
  if (!p.ok()) {
    MpirunRun r;
    r.status = p.status();
    return r;
  }
  return WatchMpirun(**p, d, clock);
}

MpirunRun WatchMpirun(RemoteProcess& p, const MpirunDeadlines& d, Clock& clock) {
  MpirunRun r;
  const Clock::time_point start = clock.Now();
  Clock::time_point last_line = start;
  auto seconds_since = [&clock](Clock::time_point t) {
    return std::chrono::duration<double>(clock.Now() - t).count();
  };
  Deadline deadline = Deadline::InSeconds(clock, d.total_s);
  p.CloseStdin();
  bool interrupted = false;
  for (;;) {
    // Short slices, so that Ctrl-C and the idle deadline stop mpirun
    // within a moment.
    auto line = p.ReadLine(deadline.Within(Millis(250)));
    if (line.ok()) {
      r.stdout_lines.push_back(*line);
      last_line = clock.Now();
    } else if (line.status().Is(ErrorKind::kEof)) {
      break;
    } else if (!line.status().Is(ErrorKind::kTimeout)) {  // e.g. a line past the cap
      p.Kill();
      r.status = line.status();
      return r;
    }
    if (InterruptFlag().load()) {
      interrupted = true;
      break;
    }
    MpirunDecision k = DecideMpirunStop(d, seconds_since(start), seconds_since(last_line));
    if (k.stop != MpirunStop::kKeepGoing) {
      r.hung = true;
      r.stop = k.stop;
      r.stop_why = k.why;
      break;
    }
  }
  if (r.hung || interrupted) p.Kill();
  if (interrupted) r.status = Status::Interrupted("mpirun stopped: interrupted");
  auto code = p.Wait(r.hung ? Deadline::InSeconds(clock, 10) : deadline);
  if (!code.ok()) {
    r.hung = true;
    p.Kill();
  } else {
    r.exit_code = *code;
  }
  r.stderr_lines = SplitLines(p.StderrSoFar());
  return r;
}

TempDir::TempDir(const std::string& prefix) {
  std::string tmpl = "/tmp/" + prefix + ".XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data())) path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  if (!path_.empty()) std::filesystem::remove_all(path_, ec);
}

Status TempDir::Write(const std::string& name, const std::string& text) const {
  std::ofstream f(path_ + "/" + name);
  f << text;
  f.close();
  return f ? Status::Ok() : Status::Io("cannot write " + path_ + "/" + name);
}

std::vector<LocalInterface> LocalIpv4Interfaces() {
  std::vector<LocalInterface> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask) continue;
    char buf[INET_ADDRSTRLEN];
    auto* a = reinterpret_cast<sockaddr_in*>(i->ifa_addr);
    if (!inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf)) continue;
    uint32_t mask = ntohl(reinterpret_cast<sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr);
    out.push_back({i->ifa_name, buf, __builtin_popcount(mask)});
  }
  freeifaddrs(list);
  return out;
}

namespace {

// An IPv4 literal as it is; a host name resolved (IPv4); "" when neither.
std::string Ipv4Of(const std::string& address) {
  in_addr a{};
  if (inet_pton(AF_INET, address.c_str(), &a) == 1) return address;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (getaddrinfo(address.c_str(), nullptr, &hints, &res) != 0 || !res) return "";
  char buf[INET_ADDRSTRLEN];
  auto* sin = reinterpret_cast<sockaddr_in*>(res->ai_addr);
  std::string out = inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf) ? buf : "";
  freeaddrinfo(res);
  return out;
}

}  // namespace

OobChoice ChooseMpiOob(const StageContext& ctx, const std::vector<const Node*>& nodes,
                       const std::string& setting) {
  if (setting.empty() && ctx.inventory().transport == "local") {
    return {"", "local", "a local run: every rank is on this machine"};
  }
  OobInputs in;
  in.setting = setting;
  if (setting.empty()) {
    in.interfaces = LocalIpv4Interfaces();
    std::optional<NetworkChoice> choice = ctx.network_choice();
    for (const Node* n : nodes) {
      in.inventory_addresses[n->name] = Ipv4Of(n->address);
      if (choice && choice->address_of.count(n->name)) {
        in.data_addresses[n->name] = choice->address_of.at(n->name);
      }
    }
  }
  return ChooseOobNetwork(in);
}

std::string BtlTcpInterface(const StageContext& ctx, const std::string& setting) {
  if (!setting.empty()) return setting;
  std::optional<NetworkChoice> choice = ctx.network_choice();
  return choice ? choice->btl_tcp_if_include : "";
}

Status PrepareMpirunFiles(const StageContext& ctx, const TempDir& dir,
                          const std::vector<MpiHost>& hosts, const std::string& tag,
                          const std::string& hostfile_text, MpirunOptions* o) {
  Status w = dir.Write("hostfile" + tag, hostfile_text);
  if (!w.ok()) return w;
  o->hostfile = dir.path() + "/hostfile" + tag;
  o->as_root = geteuid() == 0;
  if (ctx.inventory().transport == "local") return Status::Ok();
  const SshSettings& all = ctx.inventory().ssh;
  std::string include = ExpandHome(all.config_file.empty() ? "~/.ssh/config" : all.config_file);
  if (access(include.c_str(), R_OK) != 0) include.clear();
  w = dir.Write("ssh_config" + tag, MpiSshConfig(hosts, all, include));
  if (!w.ok()) return w;
  o->ssh_config = dir.path() + "/ssh_config" + tag;
  return Status::Ok();
}

}  // namespace cc
