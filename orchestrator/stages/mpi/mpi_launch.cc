#include "orchestrator/stages/mpi/mpi_launch.h"

namespace cc {

std::string MpiHostfile(const std::vector<MpiHost>& hosts) {
  std::string out = "# written by clustercheck's mpi stage: rank i runs on line i\n";
  for (const MpiHost& h : hosts) {
    out += "# " + h.node + "\n" + h.address + " slots=1\n";
  }
  return out;
}

std::string MpiSshConfig(const std::vector<MpiHost>& hosts, const SshSettings& all,
                         const std::string& include_config) {
  std::string out = "# written by clustercheck's mpi stage from the inventory's [ssh]\n";
  for (const MpiHost& h : hosts) {
    out += "Host " + h.address + "\n";
    if (!h.ssh.user.empty()) out += "  User " + h.ssh.user + "\n";
    out += "  Port " + std::to_string(h.ssh.port) + "\n";
    if (!h.ssh.identity.empty()) out += "  IdentityFile " + h.ssh.identity + "\n";
  }
  std::string strict = all.host_key_policy == "accept-new" ? "accept-new"
                       : all.host_key_policy == "off"      ? "no"
                                                           : "yes";
  out += "Host *\n";
  out += "  StrictHostKeyChecking " + strict + "\n";
  if (!all.known_hosts.empty()) out += "  UserKnownHostsFile " + all.known_hosts + "\n";
  out += "  BatchMode yes\n";
  out += "  ConnectTimeout " +
         std::to_string(std::max(1, static_cast<int>(all.connect_timeout_s))) + "\n";
  out += "  ServerAliveInterval " + std::to_string(std::max(1, static_cast<int>(all.keepalive_s))) +
         "\n";
  if (!include_config.empty()) out += "  Include " + include_config + "\n";
  return out;
}

Result<std::vector<std::string>> MpirunArgv(const MpirunOptions& o) {
  if (o.np < 1) return Status::BadArgument("mpirun needs at least one rank");
  if (o.program.empty()) return Status::BadArgument("mpirun needs a program");
  if (o.ssh_config.find_first_of(" \t\n") != std::string::npos) {
    return Status::BadArgument("the ssh_config path '" + o.ssh_config +
                               "' has white space, which Open MPI's plm_rsh_agent splits on");
  }
  std::vector<std::string> a = {o.mpirun};
  if (o.as_root) a.push_back("--allow-run-as-root");
  a.insert(a.end(), {"--hostfile", o.hostfile, "-np", std::to_string(o.np), "--map-by", o.map_by,
                     "--bind-to", "none", "--tag-output"});
  auto mca = [&](const std::string& k, const std::string& v) {
    a.insert(a.end(), {"--mca", k, v});
  };
  if (!o.ssh_config.empty()) {
    mca("plm_rsh_agent", "ssh -F " + o.ssh_config);
    mca("plm_rsh_no_tree_spawn", "1");
  }
  mca("orte_base_help_aggregate", "0");
  if (!o.btl_tcp_if_include.empty()) mca("btl_tcp_if_include", o.btl_tcp_if_include);
  if (!o.oob_tcp_if_include.empty()) mca("oob_tcp_if_include", o.oob_tcp_if_include);
  a.insert(a.end(), o.extra_args.begin(), o.extra_args.end());
  a.push_back(o.program);
  a.insert(a.end(), o.program_args.begin(), o.program_args.end());
  return a;
}

}  // namespace cc
