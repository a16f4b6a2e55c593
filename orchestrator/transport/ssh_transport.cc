#include "orchestrator/transport/ssh_transport.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>

#include "orchestrator/transport/shell_upload.h"
#include "orchestrator/transport/ssh_host_key.h"
#include "orchestrator/transport/ssh_process.h"
#include "orchestrator/transport/ssh_session.h"
#include "orchestrator/transport/ssh_sftp.h"

namespace cc {
namespace {

constexpr int kDefaultPort = 22;

std::string GetStringOption(ssh_session s, ssh_options_e option) {
  char* value = nullptr;
  if (ssh_options_get(s, option, &value) != SSH_OK || value == nullptr) return "";
  std::string out = value;
  ssh_string_free_char(value);
  return out;
}

unsigned GetPort(ssh_session s) {
  unsigned port = kDefaultPort;
  ssh_options_get_port(s, &port);
  return port;
}

// With [ssh] dial_back, a connection closes its session once an agent it
// started dialled back (nothing of it is needed while the agent runs, and
// libssh keeps ~180 KB of buffers per session), and opens a new one
// through `reopen` for whatever comes next: an upload, a command, another
// agent (the nccl stage's).
class SshConnection : public Connection {
 public:
  using Reopen = std::function<Result<std::shared_ptr<SshSession>>(Deadline)>;

  SshConnection(std::shared_ptr<SshSession> session, std::string where,
                std::vector<std::string> warnings, std::string node, SshDialBack* dial_back,
                bool fall_back, Reopen reopen)
      : session_(std::move(session)),
        where_(std::move(where)),
        warnings_(std::move(warnings)),
        node_(std::move(node)),
        dial_back_(dial_back),
        fall_back_(fall_back),
        reopen_(std::move(reopen)) {}

  Result<std::unique_ptr<RemoteProcess>> Start(const CommandLine& cmd, Deadline deadline) override {
    if (cmd.argv.empty()) return Status::BadArgument(where_ + ": empty command");
    Status open = EnsureSession(deadline);
    if (!open.ok()) return open;
    if (cmd.agent && dial_back_ != nullptr) {
      // Chosen by the node count (kDialBackAboveNodes), dialling back gets
      // half the time: the rest is for the agent over ssh, should this
      // node not reach the controller (a firewall the site never needed).
      Deadline dial = fall_back_ ? deadline.Within(std::chrono::duration_cast<Millis>(
                                       Millis(deadline.RemainingMs()) / 2))
                                 : deadline;
      auto agent = dial_back_->Start(
          node_, cmd,
          [this](const CommandLine& c, Deadline d) {
            return SshProcess::Start(session_, ShellQuoteCommand(c), where_, d);
          },
          dial);
      // Its ssh command is closed (ssh_dial_back.h); so is the session.
      if (agent.ok() && reopen_) session_.reset();
      if (agent.ok() || !fall_back_ || session_ == nullptr || session_->broken() ||
          !(agent.status().Is(ErrorKind::kTimeout) || agent.status().Is(ErrorKind::kEof))) {
        return agent;
      }
      dial_back_->NoteFellBack();
      warnings_.push_back("its agent did not dial back (" + agent.status().ToString() +
                          "): it speaks over ssh, as with [ssh] dial_back = false");
      dial_back_ = nullptr;  // and so do its later agents
    }
    return SshProcess::Start(session_, ShellQuoteCommand(cmd), where_, deadline);
  }

  // SFTP first; when its handshake fails (a shell that prints on startup
  // garbles an external sftp-server's stream, or there is no subsystem),
  // over a command channel from then on.
  Status Upload(const std::string& content, const std::string& remote_path, int mode,
                Deadline deadline) override {
    Status open = EnsureSession(deadline);
    if (!open.ok()) return open;
    if (!sftp_unusable_) {
      auto mv = [this](const std::string& from, const std::string& to, Deadline d) -> Status {
        auto out = RunToCompletion(*this, {{"mv", "-f", "--", from, to}, {}}, d);
        return out.ok() ? Status::Ok() : out.status();
      };
      Status s = Sftp().Upload(content, remote_path, mode, deadline, mv);
      // A push is one upload per run: the SFTP channel's buffers, grown to
      // its largest writes (~64 KB a node), would otherwise be held by
      // every connection to the end.
      if (!IsSftpHandshakeFailure(s)) {
        sftp_.reset();
        return s;
      }
      sftp_unusable_ = true;
      sftp_.reset();
    }
    return UploadThroughShell(*this, content, remote_path, mode, deadline);
  }

  Result<long long> FileSize(const std::string& remote_path, Deadline deadline) override {
    Status open = EnsureSession(deadline);
    if (!open.ok()) return open;
    if (!sftp_unusable_) {
      auto size = Sftp().FileSize(remote_path, deadline);
      if (size.ok() || !IsSftpHandshakeFailure(size.status())) return size;
      sftp_unusable_ = true;
      sftp_.reset();
    }
    return FileSizeThroughShell(*this, remote_path, deadline);
  }

  std::string Describe() const override { return where_; }
  std::vector<std::string> Warnings() const override { return warnings_; }

 private:
  Status EnsureSession(Deadline deadline) {
    if (session_) return Status::Ok();
    auto session = reopen_(deadline);
    if (!session.ok()) return session.status().WithContext("connecting again");
    session_ = std::move(*session);
    return Status::Ok();
  }

  SshSftp& Sftp() {
    if (!sftp_) sftp_ = std::make_unique<SshSftp>(session_, where_);
    return *sftp_;
  }

  std::shared_ptr<SshSession> session_;  // declared first: freed last
  std::unique_ptr<SshSftp> sftp_;
  bool sftp_unusable_ = false;  // its handshake failed once: use the shell
  std::string where_;
  std::vector<std::string> warnings_;
  std::string node_;
  SshDialBack* dial_back_;  // the transport's; null: agents speak over ssh
  bool fall_back_;          // dial_back_auto: an agent that cannot dial uses ssh
  Reopen reopen_;           // set with dial_back: session_ may be null
};

// Options from the config file first, then what the inventory set.
Status Configure(SshSession& session, const Node& node) {
  ssh_session s = session.get();
  const SshSettings& ssh = node.ssh;
  std::string host = node.address.empty() ? node.name : node.address;
  // Log verbosity is left alone: setting it per session also resets
  // libssh's global level, which LIBSSH_DEBUG=1..4 sets for debugging.
  if (ssh_options_set(s, SSH_OPTIONS_HOST, host.c_str()) != SSH_OK) {
    return Status::BadInventory("address \"" + host + "\": " + session.Error());
  }
  if (!ssh.config_file.empty() && access(ssh.config_file.c_str(), R_OK) != 0) {
    return Status::BadInventory("ssh config_file " + ssh.config_file + ": " + std::strerror(errno));
  }
  if (ssh_options_parse_config(s, ssh.config_file.empty() ? nullptr : ssh.config_file.c_str()) <
      0) {
    return Status::BadInventory("ssh config " +
                                (ssh.config_file.empty() ? "~/.ssh/config" : ssh.config_file) +
                                ": " + session.Error());
  }
  if (!ssh.user.empty()) ssh_options_set(s, SSH_OPTIONS_USER, ssh.user.c_str());
  if (ssh.port != kDefaultPort) {
    unsigned port = static_cast<unsigned>(ssh.port);
    ssh_options_set(s, SSH_OPTIONS_PORT, &port);
  }
  if (!ssh.known_hosts.empty()) {
    ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, ssh.known_hosts.c_str());
  }
  int off = 0, on = 1;
  ssh_options_set(s, SSH_OPTIONS_PASSWORD_AUTH, &off);
  ssh_options_set(s, SSH_OPTIONS_KBDINT_AUTH, &off);
  ssh_options_set(s, SSH_OPTIONS_GSSAPI_AUTH, &off);
  // StrictHostKeyChecking stays libssh's default (on): turned off, libssh
  // reports every key as known. The policy is JudgeHostKey's.
  ssh_options_set(s, SSH_OPTIONS_NODELAY, &on);
  return Status::Ok();
}

void EnableTcpKeepalive(int fd, double keepalive_s) {
  if (fd < 0 || keepalive_s <= 0) return;
  int on = 1;
  int secs = std::max(1, static_cast<int>(keepalive_s));
  int count = 3;
  // Not a TCP socket (a ProxyCommand pipe): these fail, which is fine.
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &secs, sizeof secs);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &secs, sizeof secs);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

KnownHostState StateOf(enum ssh_known_hosts_e e) {
  switch (e) {
    case SSH_KNOWN_HOSTS_OK:
      return KnownHostState::kOk;
    case SSH_KNOWN_HOSTS_UNKNOWN:
      return KnownHostState::kUnknown;
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      return KnownHostState::kFileMissing;
    case SSH_KNOWN_HOSTS_CHANGED:
      return KnownHostState::kChanged;
    case SSH_KNOWN_HOSTS_OTHER:
      return KnownHostState::kOtherType;
    case SSH_KNOWN_HOSTS_ERROR:
      break;
  }
  return KnownHostState::kError;
}

// Fills key_type and fingerprint from the key the server offered.
void DescribeServerKey(ssh_session s, HostKeyFacts& facts) {
  ssh_key key = nullptr;
  if (ssh_get_server_publickey(s, &key) != SSH_OK) return;
  facts.key_type = ssh_key_type_to_char(ssh_key_type(key));
  unsigned char* hash = nullptr;
  size_t len = 0;
  if (ssh_get_publickey_hash(key, SSH_PUBLICKEY_HASH_SHA256, &hash, &len) == 0) {
    char* fp = ssh_get_fingerprint_hash(SSH_PUBLICKEY_HASH_SHA256, hash, len);
    if (fp != nullptr) facts.fingerprint = fp;
    ssh_string_free_char(fp);
    ssh_clean_pubkey_hash(&hash);
  }
  ssh_key_free(key);
}

Status CheckHostKey(SshSession& session, const Node& node, HostKeyPolicy policy,
                    std::vector<std::string>& warnings) {
  ssh_session s = session.get();
  HostKeyFacts facts;
  facts.node = node.name;
  facts.host = KnownHostsName(GetStringOption(s, SSH_OPTIONS_HOST), GetPort(s));
  facts.known_hosts = GetStringOption(s, SSH_OPTIONS_KNOWNHOSTS);
  if (facts.known_hosts.empty()) facts.known_hosts = "~/.ssh/known_hosts";
  DescribeServerKey(s, facts);
  KnownHostState state = StateOf(ssh_session_is_known_server(s));
  if (state == KnownHostState::kError) facts.detail = session.Error();
  HostKeyVerdict v = JudgeHostKey(policy, state, facts);
  switch (v.action) {
    case HostKeyVerdict::Action::kReject:
      return v.error;
    case HostKeyVerdict::Action::kLearn: {
      // Appends from many threads at once; one line each, but keep them apart.
      static std::mutex mu;
      std::lock_guard<std::mutex> lock(mu);
      if (ssh_session_update_known_hosts(s) != SSH_OK) {
        return Status::Io("cannot add the host key of " + facts.host + " to " + facts.known_hosts +
                          ": " + session.Error());
      }
      return Status::Ok();
    }
    case HostKeyVerdict::Action::kAccept:
      if (!v.warning.empty()) warnings.push_back(v.warning);
      return Status::Ok();
  }
  return Status::Ok();
}

std::string MethodNames(int methods) {
  std::string out;
  auto add = [&](int bit, const char* name) {
    if (!(methods & bit)) return;
    if (!out.empty()) out += ",";
    out += name;
  };
  add(SSH_AUTH_METHOD_PUBLICKEY, "publickey");
  add(SSH_AUTH_METHOD_PASSWORD, "password");
  add(SSH_AUTH_METHOD_INTERACTIVE, "keyboard-interactive");
  add(SSH_AUTH_METHOD_GSSAPI_MIC, "gssapi-with-mic");
  add(SSH_AUTH_METHOD_HOSTBASED, "hostbased");
  return out.empty() ? "none listed" : out;
}

Status Authenticate(SshSession& session, const Node& node, const std::string& who,
                    Deadline deadline) {
  ssh_session s = session.get();
  BlockingCall bounded(session, deadline);
  int rc = ssh_userauth_none(s, nullptr);
  if (rc == SSH_AUTH_SUCCESS) return Status::Ok();
  std::string tried;
  if (rc != SSH_AUTH_ERROR) {
    const std::string& identity = node.ssh.identity;
    if (!identity.empty()) {
      tried = "publickey with identity " + identity;
      ssh_key key = nullptr;
      if (ssh_pki_import_privkey_file(identity.c_str(), nullptr, nullptr, nullptr, &key) !=
          SSH_OK) {
        return Status::AuthFailed("cannot load identity " + identity +
                                  " (missing, unreadable, not a private key, or protected by a "
                                  "passphrase: load such keys into ssh-agent and leave identity "
                                  "unset)");
      }
      session.SetTimeout(deadline);
      rc = ssh_userauth_publickey(s, nullptr, key);
      ssh_key_free(key);
    } else {
      const char* agent = std::getenv("SSH_AUTH_SOCK");
      tried = std::string("publickey with ") +
              (agent != nullptr && *agent ? "ssh-agent keys and " : "") +
              "the default/configured identities (~/.ssh/id_*, IdentityFile)";
      rc = ssh_userauth_publickey_auto(s, nullptr, nullptr);
    }
  }
  if (rc == SSH_AUTH_SUCCESS) return Status::Ok();
  if (deadline.Passed()) return Status::Timeout("authenticating to " + who + ": deadline passed");
  if (rc == SSH_AUTH_PARTIAL) {
    return Status::AuthFailed(tried + " was accepted by " + who + ", but it also requires " +
                              MethodNames(ssh_userauth_list(s, nullptr)));
  }
  if (rc == SSH_AUTH_DENIED) {
    return Status::AuthFailed(tried + " refused by " + who + " (server accepts: " +
                              MethodNames(ssh_userauth_list(s, nullptr)) + ")");
  }
  return Status::Unreachable("authenticating to " + who + ": " + session.Error());
}

Status ConnectError(SshSession& session, const std::string& where, const Node& node,
                    Deadline deadline) {
  std::string why = session.Error();
  if (deadline.Passed()) {
    return Status::Timeout("no ssh handshake with " + where + " by the deadline: " + why);
  }
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", node.ssh.connect_timeout_s);
  return Status::Unreachable("cannot connect to " + where + " (connect_timeout_s " + limit +
                             "): " + why);
}

// A session to `node`, connected, its host key judged and authenticated.
// `where` gets "user@host:port"; `warnings` the host key's.
Result<std::shared_ptr<SshSession>> OpenSession(const Node& node, HostKeyPolicy policy,
                                                Deadline deadline, std::string* who,
                                                std::vector<std::string>* warnings) {
  auto session = std::make_shared<SshSession>();
  if (session->get() == nullptr) return Status::Internal(node.name + ": ssh_new failed");
  Status s = Configure(*session, node);
  if (!s.ok()) return s.WithContext(node.name);

  ssh_session ss = session->get();
  std::string where = GetStringOption(ss, SSH_OPTIONS_HOST) + ":" + std::to_string(GetPort(ss));
  // connect_timeout_s bounds TCP connect, banner and key exchange; the
  // caller's deadline bounds everything.
  session->SetTimeout(
      deadline.Min(Deadline::InSeconds(deadline.clock(), node.ssh.connect_timeout_s)));
  if (ssh_connect(ss) != SSH_OK) {
    return ConnectError(*session, where, node, deadline).WithContext(node.name);
  }
  EnableTcpKeepalive(ssh_get_fd(ss), node.ssh.keepalive_s);

  s = CheckHostKey(*session, node, policy, *warnings);
  if (!s.ok()) return s.WithContext(node.name);

  *who = GetStringOption(ss, SSH_OPTIONS_USER) + "@" + where;
  s = Authenticate(*session, node, *who, deadline);
  if (!s.ok()) return s.WithContext(node.name);
  return session;
}

}  // namespace

Result<std::unique_ptr<Connection>> SshTransport::Connect(const Node& node, Deadline deadline) {
  EnsureLibsshInitialized();
  auto policy = ParseHostKeyPolicy(node.ssh.host_key_policy);
  if (!policy.ok()) return policy.status().WithContext(node.name);
  std::string who;
  std::vector<std::string> warnings;
  auto session = OpenSession(node, *policy, deadline, &who, &warnings);
  if (!session.ok()) return session.status();
  SshConnection::Reopen reopen;
  if (node.ssh.dial_back) {
    // The node outlives its connections (the run's inventory).
    reopen = [&node, p = *policy](Deadline d) {
      std::string who;
      std::vector<std::string> warnings;  // said at the first connect
      return OpenSession(node, p, d, &who, &warnings);
    };
  }
  return std::unique_ptr<Connection>(std::make_unique<SshConnection>(
      *session, "ssh " + who, std::move(warnings), node.name,
      node.ssh.dial_back ? dial_back_.get() : nullptr, node.ssh.dial_back_auto, std::move(reopen)));
}

Status SshTransport::Begin(const Inventory& inventory, const std::string&) {
  if (!inventory.ssh.dial_back || inventory.nodes.empty()) return Status::Ok();
  std::set<std::string> names;
  for (const Node& n : inventory.nodes) names.insert(n.name);
  const Node& first = inventory.nodes.front();
  auto opened =
      SshDialBack::Open(inventory.ssh.dial_back_listen,
                        first.address.empty() ? first.name : first.address, std::move(names));
  if (!opened.ok() && inventory.ssh.dial_back_auto) {
    // Not asked for: the agents speak over ssh, as below the node count.
    std::fprintf(stderr, "clustercheck: [ssh] dial_back not used: %s\n",
                 opened.status().ToString().c_str());
    return Status::Ok();
  }
  if (!opened.ok()) return opened.status();
  dial_back_ = std::move(*opened);
  dial_back_auto_ = inventory.ssh.dial_back_auto;
  return Status::Ok();
}

nlohmann::json SshTransport::LauncherMeta() const {
  if (!dial_back_) return nullptr;
  nlohmann::json meta = dial_back_->Meta();
  if (dial_back_auto_) {
    meta["dial_back_chosen"] = "more than " + std::to_string(kDialBackAboveNodes) +
                               " nodes and no [ssh] dial_back in the inventory";
  }
  return meta;
}

}  // namespace cc
