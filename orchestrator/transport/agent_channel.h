// One running agent process on one node, spoken to in JSON lines
// (agent/protocol.h). Wraps a RemoteProcess from any Transport.
//
// Threading: used by one thread at a time, like its Connection.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/protocol.h"
#include "common/deadline.h"
#include "common/status.h"
#include "orchestrator/transport/transport.h"

namespace cc {

using protocol::Json;

// Set by the signal handler; every wait in an AgentChannel checks it at
// least every kCancelPollMs and then returns kInterrupted.
std::atomic<bool>& InterruptFlag();
inline constexpr long long kCancelPollMs = 200;

struct CallResult {
  std::vector<Json> results;  // "result" messages, in order
  std::vector<Json> logs;     // "log" messages
  // The data of the first result named `name`, or null.
  Json Find(const std::string& name) const;
};

class AgentChannel {
 public:
  // `clock` is what Close() waits on (the deadlines of the other calls
  // carry their own). REQUIRES: `clock` outlives the channel.
  explicit AgentChannel(std::unique_ptr<RemoteProcess> process, Clock& clock = RealClock());
  ~AgentChannel();

  // Reads the unprompted hello and checks the protocol version. Lines that
  // are not JSON before it (a login shell's banner: module systems, conda,
  // "you have mail") are skipped and kept in preamble(); should the hello
  // never come (kTimeout, kEof), the error quotes them with stderr.
  Result<Json> ReadHello(Deadline deadline);
  // What the process printed before its hello; "" for a quiet shell. Kept
  // up to kMaxPreamble bytes.
  const std::string& preamble() const { return preamble_; }
  static constexpr size_t kMaxPreamble = 4096;

  // Sends a request and returns its id.
  Result<int64_t> Send(const std::string& cmd, const Json& args, Deadline deadline);
  // A control line for a running request (phased commands).
  Status SendControl(int64_t id, const std::string& cmd, const Json& args, Deadline deadline);
  // The next message of any type. kTimeout at the deadline, kInterrupted
  // when InterruptFlag() is set, kEof when the agent went away (with its
  // stderr in the message).
  Result<Json> Next(Deadline deadline);

  // Send + read until the request's `end`. `on_message` sees every
  // message (progress, log, result) as it arrives. An `end` with ok=false
  // is returned as kInternal with the agent's error.
  Result<CallResult> Call(const std::string& cmd, const Json& args, Deadline deadline,
                          const std::function<void(const Json&)>& on_message = {});

  // Closes stdin (the agent exits on EOF), waits up to `grace` for the
  // exit, then kills. Idempotent.
  void Close(Millis grace = Millis(2000));
  RemoteProcess& process() { return *process_; }
  bool closed() const { return closed_; }

 private:
  Status Describe(Status s);
  // Next, but a line that is not a message is returned as kProtocol with
  // the line itself in `*raw`.
  Result<Json> NextMessage(Deadline deadline, std::string* raw);
  std::unique_ptr<RemoteProcess> process_;
  Clock& clock_;
  std::string preamble_;
  int64_t next_id_ = 1;
  bool closed_ = false;
};

}  // namespace cc
