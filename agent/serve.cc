#include "agent/serve.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <mutex>

#include "agent/command.h"
#include "agent/line_reader.h"
#include "version.h"

namespace cc::agent {
namespace {

// Writes whole JSON lines; a line is never interleaved with another.
class Writer {
 public:
  explicit Writer(int fd) : fd_(fd) {}
  void Write(const Json& j) {
    std::string s = j.dump(-1, ' ', false, Json::error_handler_t::replace);
    s.push_back('\n');
    std::lock_guard<std::mutex> lock(mu_);
    const char* p = s.data();
    size_t left = s.size();
    while (left > 0) {
      ssize_t n = write(fd_, p, left);
      if (n <= 0) return;  // controller gone; stdin EOF will end us
      p += n;
      left -= static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
  std::mutex mu_;
};

class Context : public CommandContext {
 public:
  Context(int64_t id, const std::string& root, Writer& out, LineReader& in)
      : id_(id), root_(root), out_(out), in_(in) {}
  const std::string& root() const override { return root_; }
  void Result(const std::string& name, const Json& data) override {
    out_.Write(protocol::MakeResult(id_, name, data));
  }
  void Log(const std::string& level, const std::string& msg) override {
    out_.Write(protocol::MakeLog(id_, level, msg));
  }
  void Progress(int64_t done, int64_t total, const std::string& what) override {
    out_.Write(protocol::MakeProgress(id_, done, total, what));
  }
  std::optional<Json> NextControl(Deadline deadline) override {
    std::string line;
    for (;;) {
      auto got = in_.Next(&line, deadline);
      if (got != LineReader::Got::kLine) {
        if (got == LineReader::Got::kEof) stdin_closed_ = true;
        return std::nullopt;
      }
      auto req = protocol::ParseRequest(line);
      if (req.ok()) return *req;
      Log("warn", "ignored control line: " + req.status().message());
    }
  }
  bool stdin_closed() const { return stdin_closed_; }

 private:
  int64_t id_;
  const std::string& root_;
  Writer& out_;
  LineReader& in_;
  bool stdin_closed_ = false;
};

std::string Hostname() {
  char buf[256] = {0};
  gethostname(buf, sizeof buf - 1);
  return buf;
}

std::string Arch() {
  utsname u{};
  uname(&u);
  return u.machine;
}

}  // namespace

int Serve(int in_fd, int out_fd, const ServeOptions& options) {
  Writer out(out_fd);
  LineReader in(in_fd);
  int version = options.protocol_version < 0 ? protocol::kVersion : options.protocol_version;
  Json hello = protocol::MakeHello(CLUSTERCHECK_VERSION, Arch(), getpid(), Hostname(), version);
  out.Write(hello);
  const Deadline forever = Deadline::In(Millis(1000LL * 3600 * 24 * 365));
  std::string line;
  while (in.Next(&line, forever) == LineReader::Got::kLine) {
    if (line.empty()) continue;
    auto req = protocol::ParseRequest(line);
    if (!req.ok()) {
      out.Write(protocol::MakeEnd(-1, false, req.status().message()));
      continue;
    }
    int64_t id = req->value("id", int64_t{-1});
    int v = req->value("v", -1);
    if (v != version) {
      out.Write(protocol::MakeEnd(id, false,
                                  "protocol version mismatch: request has " + std::to_string(v) +
                                      ", agent speaks " + std::to_string(version)));
      continue;
    }
    std::string cmd = (*req)["cmd"];
    if (cmd == "hello") {
      out.Write(protocol::MakeResult(id, "hello", hello));
      out.Write(protocol::MakeEnd(id, true));
      continue;
    }
    const CommandEntry* entry = FindCommand(cmd);
    if (entry == nullptr) {
      out.Write(protocol::MakeEnd(id, false, "unknown command '" + cmd + "'"));
      continue;
    }
    Context ctx(id, options.root, out, in);
    Json args = req->contains("args") ? (*req)["args"] : Json::object();
    Status s;
    try {
      s = entry->run(args, ctx);
    } catch (const std::exception& e) {
      // A bug in one command must not kill the agent mid-run.
      s = Status::Internal(std::string("exception in ") + cmd + ": " + e.what());
    }
    out.Write(protocol::MakeEnd(id, s.ok(), s.ok() ? "" : s.ToString()));
    if (ctx.stdin_closed()) break;
  }
  return 0;
}

}  // namespace cc::agent
