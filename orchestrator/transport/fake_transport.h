// FakeTransport: scripted nodes for unit tests of the controller. Per node
// name: a connect error, a program (callbacks that turn the command line and
// each stdin line into stdout lines, so a test can play an agent), a hang,
// an exit code; uploads are recorded and FileSize answers from them.
//
//   FakeTransport t;
//   FakeNode down;
//   down.connect_error = Status::Unreachable("gpu002: no route");
//   t.SetNode("gpu002", down);
//   FakeNode agent;
//   agent.program = FakeAgent([](const nlohmann::json& req) {
//     return std::vector<nlohmann::json>{
//         protocol::MakeResult(req["id"], "system", {{"os", "linux"}})};
//   });
//   t.SetDefault(agent);
//
// Waits (a hang, a silent program, connect_hangs) pass on the clock of the
// deadline they are given: on a FakeClock (common/fake_clock.h) a timeout
// costs no real time.
//
// (Plain assignments rather than designated initializers: GCC 12 flags the
// members left out under -Wextra -Werror.)
//
// Threading: Connect and the inspection calls may be used from any thread.
// Callbacks run on the thread that writes stdin (or starts the process);
// callbacks shared between nodes must guard their own state.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "orchestrator/transport/transport.h"

namespace cc {

// What a scripted process does in answer to one event.
struct FakeReply {
  std::vector<std::string> lines;  // stdout lines, without '\n'
  std::string err;                 // appended to stderr
  bool exit = false;               // exits with the program's exit_code after the lines
  bool hang = false;               // then answers nothing more and never exits by itself

  static FakeReply Lines(std::vector<std::string> lines) {
    FakeReply r;
    r.lines = std::move(lines);
    return r;
  }
  // Prints `lines` and `err`, then exits.
  static FakeReply Exit(std::vector<std::string> lines = {}, std::string err = "") {
    FakeReply r = Lines(std::move(lines));
    r.err = std::move(err);
    r.exit = true;
    return r;
  }
  static FakeReply Hang() {
    FakeReply r;
    r.hang = true;
    return r;
  }
};

// A scripted program; every member is optional. Without callbacks it
// prints nothing and, like the agent, exits when its stdin closes.
struct FakeProgram {
  // Called at Start, before any input (an agent's hello).
  std::function<FakeReply(const CommandLine&)> on_start;
  // Called for each complete stdin line.
  std::function<FakeReply(const CommandLine&, const std::string& line)> on_line;
  // The code when it exits by itself (stdin closed, or a reply's `exit`).
  // Kill() makes it 128+SIGTERM.
  int exit_code = 0;
  // Says nothing and never exits: every ReadLine and Wait runs to its
  // deadline (kTimeout) until Kill().
  bool hang = false;
};

struct FakeNode {
  Status connect_error;        // non-ok: Connect returns it
  bool connect_hangs = false;  // Connect blocks to its deadline: kTimeout
  Status start_error;          // non-ok: every Start returns it
  Status upload_error;         // non-ok: every Upload returns it
  FakeProgram program;         // what every Start on this node runs
};

class FakeTransport : public Transport {
 public:
  // Scripts a node. Nodes not scripted get the default (SetDefault), which
  // is at first a FakeNode{}: connects, runs programs that print nothing.
  void SetNode(const std::string& name, FakeNode node);
  void SetDefault(FakeNode node);
  // Puts a file on a node, as if an earlier run had uploaded it.
  void SetFile(const std::string& node, const std::string& path, const std::string& content);

  // Files on a node (seeded and uploaded), by path as the caller wrote it.
  std::map<std::string, std::string> Files(const std::string& node) const;
  // Successful Upload calls to a node.
  int UploadCount(const std::string& node) const;
  // Command lines started on a node, in order.
  std::vector<CommandLine> Started(const std::string& node) const;
  // Connect calls for a node, failed ones included.
  int ConnectCount(const std::string& node) const;

  std::string name() const override { return "fake"; }
  Result<std::unique_ptr<Connection>> Connect(const Node& node, Deadline deadline) override;

 private:
  friend class FakeConnection;
  struct NodeState {
    std::map<std::string, std::string> files;
    int uploads = 0;
    int connects = 0;
    std::vector<CommandLine> started;
  };
  FakeNode ScriptFor(const std::string& node) const;  // REQUIRES: mu_ held

  mutable std::mutex mu_;
  std::map<std::string, FakeNode> scripts_;
  FakeNode default_;
  std::map<std::string, NodeState> state_;
};

// A FakeProgram that plays clustercheck-agent: says hello (protocol
// version `version`), then answers each request line with what `answer`
// returns for the parsed request, followed by {"type":"end","ok":true} for
// its id unless the answer has an end of its own. A line that is not a
// request gets an end with ok=false.
FakeProgram FakeAgent(
    std::function<std::vector<nlohmann::json>(const nlohmann::json& request)> answer,
    const std::string& hostname = "fake", int version = -1);

}  // namespace cc
