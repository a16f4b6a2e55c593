#include "orchestrator/transport/ssh_host_key.h"

namespace cc {
namespace {

std::string Offered(const HostKeyFacts& f) {
  return f.key_type.empty() ? f.fingerprint : f.key_type + " " + f.fingerprint;
}

std::string RemoveHint(const HostKeyFacts& f) {
  return " (if the node was reinstalled, check the new key and remove the old "
         "one: ssh-keygen -R '" +
         f.host + "' -f " + f.known_hosts + ")";
}

Status Changed(const HostKeyFacts& f, const std::string& what_is_known) {
  return Status::HostKeyMismatch("host key for " + f.host + " changed: server offers " +
                                 Offered(f) + ", " + f.known_hosts + " has " + what_is_known +
                                 " — possible MITM or a reinstalled node" + RemoveHint(f));
}

// "ssh-keyscan -H -p 2222 10.0.0.7 >> F" for "[10.0.0.7]:2222": the line
// to paste, so that a newcomer need not learn known_hosts' bracket syntax.
std::string KeyscanLine(const HostKeyFacts& f) {
  std::string host = f.host, port;
  size_t close = host.rfind("]:");
  if (!host.empty() && host[0] == '[' && close != std::string::npos) {
    port = host.substr(close + 2);
    host = host.substr(1, close - 1);
  }
  return "ssh-keyscan -H " + (port.empty() ? "" : "-p " + port + " ") + host + " >> " +
         f.known_hosts;
}

Status NotKnown(const HostKeyFacts& f, bool file_missing) {
  return Status::HostKeyMismatch(
      "host key for " + f.host + " is not in " + f.known_hosts +
      (file_missing ? " (the file does not exist)" : "") + " (" + Offered(f) +
      "); to trust it, compare that fingerprint with the node's and run: " + KeyscanLine(f) +
      " (or set host_key_policy = \"accept-new\" in [ssh] to learn new keys)");
}

}  // namespace

Result<HostKeyPolicy> ParseHostKeyPolicy(const std::string& text) {
  if (text == "strict" || text.empty()) return HostKeyPolicy::kStrict;
  if (text == "accept-new") return HostKeyPolicy::kAcceptNew;
  if (text == "off") return HostKeyPolicy::kOff;
  return Status::BadInventory("host_key_policy \"" + text +
                              "\" is not one of strict, accept-new, off");
}

HostKeyVerdict JudgeHostKey(HostKeyPolicy policy, KnownHostState state, const HostKeyFacts& facts) {
  using Action = HostKeyVerdict::Action;
  HostKeyVerdict v;
  if (policy == HostKeyPolicy::kOff) {
    v.action = Action::kAccept;
    v.warning = "host key checking is off for " + facts.node;
    if (state == KnownHostState::kChanged || state == KnownHostState::kOtherType) {
      v.warning +=
          " (and its key " + facts.fingerprint + " differs from " + facts.known_hosts + ")";
    }
    return v;
  }
  switch (state) {
    case KnownHostState::kOk:
      v.action = Action::kAccept;
      return v;
    case KnownHostState::kUnknown:
    case KnownHostState::kFileMissing:
      if (policy == HostKeyPolicy::kAcceptNew) {
        v.action = Action::kLearn;
        return v;
      }
      v.error = NotKnown(facts, state == KnownHostState::kFileMissing);
      return v;
    case KnownHostState::kChanged:
      v.error = Changed(facts, "another key");
      return v;
    case KnownHostState::kOtherType:
      v.error = Changed(facts, "only keys of another type for it");
      return v;
    case KnownHostState::kError:
      break;
  }
  v.error = Status::Io("cannot check the host key of " + facts.host + " against " +
                       facts.known_hosts + ": " + facts.detail);
  return v;
}

std::string KnownHostsName(const std::string& host, unsigned port) {
  if (port == 22) return host;
  return "[" + host + "]:" + std::to_string(port);
}

}  // namespace cc
