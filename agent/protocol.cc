#include "agent/protocol.h"

namespace cc::protocol {

Json MakeRequest(int64_t id, const std::string& cmd, const Json& args, int version) {
  return Json{
      {"v", version}, {"id", id}, {"cmd", cmd}, {"args", args.is_null() ? Json::object() : args}};
}

Json MakeHello(const std::string& agent_version, const std::string& arch, int64_t pid,
               const std::string& hostname, int version) {
  return Json{{"type", "hello"}, {"v", version}, {"agent_version", agent_version},
              {"arch", arch},    {"pid", pid},   {"hostname", hostname}};
}

Json MakeProgress(int64_t id, int64_t done, int64_t total, const std::string& what) {
  return Json{{"type", "progress"}, {"id", id}, {"done", done}, {"total", total}, {"what", what}};
}

Json MakeResult(int64_t id, const std::string& name, const Json& data) {
  return Json{{"type", "result"}, {"id", id}, {"name", name}, {"data", data}};
}

Json MakeLog(int64_t id, const std::string& level, const std::string& msg) {
  return Json{{"type", "log"}, {"id", id}, {"level", level}, {"msg", msg}};
}

Json MakeEnd(int64_t id, bool ok, const std::string& error) {
  Json j{{"type", "end"}, {"id", id}, {"ok", ok}};
  if (!ok) j["error"] = error;
  return j;
}

namespace {
std::string Shorten(const std::string& s) { return s.size() > 120 ? s.substr(0, 120) + "..." : s; }
Result<Json> ParseObjectWith(const std::string& line, const char* key) {
  Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::Protocol("not a JSON object: '" + Shorten(line) + "'");
  }
  if (!j.contains(key) || !j[key].is_string()) {
    return Status::Protocol(std::string("missing string \"") + key + "\": '" + Shorten(line) + "'");
  }
  return j;
}
}  // namespace

Result<Json> ParseMessage(const std::string& line) { return ParseObjectWith(line, "type"); }

Result<Json> ParseRequest(const std::string& line) { return ParseObjectWith(line, "cmd"); }

Status CheckHello(const Json& hello) {
  if (hello.value("type", "") != "hello") {
    return Status::Protocol("expected hello, got '" + hello.dump() + "'");
  }
  int v = hello.value("v", -1);
  if (v != kVersion) {
    return Status::Protocol("agent speaks protocol version " + std::to_string(v) +
                            ", controller speaks " + std::to_string(kVersion));
  }
  return Status::Ok();
}

}  // namespace cc::protocol
