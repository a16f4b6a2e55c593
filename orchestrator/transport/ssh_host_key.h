// Host key policy: what to do with the key a server offers, given what
// known_hosts says about it. Pure; SshTransport feeds it libssh's answer.
#pragma once

#include <string>

#include "common/status.h"

namespace cc {

enum class HostKeyPolicy {
  kStrict,     // known keys only
  kAcceptNew,  // learn unknown keys, refuse changed ones
  kOff,        // accept anything, with a warning in the report
};

// "strict" | "accept-new" | "off"; kBadInventory otherwise.
Result<HostKeyPolicy> ParseHostKeyPolicy(const std::string& text);

// What known_hosts says about the server's key (libssh's
// ssh_session_is_known_server, in our words).
enum class KnownHostState {
  kOk,           // the key is listed for this host
  kUnknown,      // the host is not listed
  kFileMissing,  // known_hosts does not exist
  kChanged,      // the host is listed with another key
  kOtherType,    // the host is listed only with keys of another type
  kError,        // known_hosts could not be read
};

struct HostKeyFacts {
  std::string node;         // inventory name, for the warning
  std::string host;         // as known_hosts writes it: "h" or "[h]:2222"
  std::string key_type;     // "ssh-ed25519"
  std::string fingerprint;  // "SHA256:..."
  std::string known_hosts;  // the file consulted
  std::string detail;       // libssh's error, for kError
};

struct HostKeyVerdict {
  enum class Action { kAccept, kLearn, kReject };
  Action action = Action::kReject;
  Status error;         // why, when kReject
  std::string warning;  // for the report, when accepted under "off"
};

HostKeyVerdict JudgeHostKey(HostKeyPolicy policy, KnownHostState state, const HostKeyFacts& facts);

// "host" for port 22, "[host]:port" otherwise (OpenSSH's known_hosts form).
std::string KnownHostsName(const std::string& host, unsigned port);

}  // namespace cc
