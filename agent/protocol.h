// The agent protocol: JSON lines, shared by agent and controller. Versioned;
// the version is checked at `hello` on both sides.
//
// Controller -> agent (stdin), one object per line:
//   {"v":1,"id":7,"cmd":"facts","args":{...}}
//   Commands that run in phases (listeners, probes) read further control
//   lines on the same stdin: {"v":1,"id":7,"cmd":"<control>","args":{...}}.
// Agent -> controller (stdout), one object per line, each with "type":
//   hello    {"type":"hello","v":1,"agent_version":"0.1.0","arch":"x86_64",
//             "pid":123,"hostname":"gpu001"}          (once, unprompted, first)
//   progress {"type":"progress","id":7,"done":3,"total":10,"what":"..."}
//   result   {"type":"result","id":7,"name":"system","data":{...}}
//   log      {"type":"log","id":7,"level":"info|warn|error","msg":"..."}
//   end      {"type":"end","id":7,"ok":true}  or  {... "ok":false,"error":"..."}
// The agent exits when its stdin closes. Every request ends with exactly
// one `end` for its id.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"

namespace cc::protocol {

inline constexpr int kVersion = 1;

using Json = nlohmann::json;

Json MakeRequest(int64_t id, const std::string& cmd, const Json& args, int version = kVersion);
Json MakeHello(const std::string& agent_version, const std::string& arch, int64_t pid,
               const std::string& hostname, int version = kVersion);
Json MakeProgress(int64_t id, int64_t done, int64_t total, const std::string& what);
Json MakeResult(int64_t id, const std::string& name, const Json& data);
Json MakeLog(int64_t id, const std::string& level, const std::string& msg);
Json MakeEnd(int64_t id, bool ok, const std::string& error = "");

// One line (no newline) -> object. kProtocol with the offending text
// (shortened) when it is not a JSON object with a string "type" or "cmd".
Result<Json> ParseMessage(const std::string& line);
Result<Json> ParseRequest(const std::string& line);

// Checks a hello: kProtocol naming both versions on mismatch.
Status CheckHello(const Json& hello);

}  // namespace cc::protocol
