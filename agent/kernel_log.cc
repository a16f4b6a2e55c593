#include "agent/kernel_log.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "agent/facts_exec.h"

namespace cc::agent {

using nlohmann::json;

namespace {

// The kernel's ring buffer is at most a few MiB (log_buf_len); more than
// this means the file is not a kernel log.
constexpr size_t kMaxKmsgBytes = 64 << 20;
// A /dev/kmsg read needs room for one whole record (CONSOLE_EXT_LOG_MAX,
// 8 KiB) or fails with EINVAL.
constexpr size_t kKmsgReadBytes = 16 << 10;
constexpr double kDmesgDeadlineS = 10;

// The whole of s as a number; nullopt for anything else.
std::optional<double> Number(const std::string& s) {
  std::string t = Trim(s);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return v;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

// Reads all of path into *data. The real /dev/kmsg hands out one record per
// read and never ends: EAGAIN (O_NONBLOCK) means everything was read. A
// fixture file ends with a read of 0.
bool ReadKmsg(const std::string& path, std::string* data, std::string* error) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": " + strerror(errno);
    return false;
  }
  std::string buf(kKmsgReadBytes, '\0');
  bool ok = true;
  while (data->size() < kMaxKmsgBytes) {
    ssize_t n = read(fd, buf.data(), buf.size());
    if (n > 0) {
      data->append(buf.data(), static_cast<size_t>(n));
      continue;
    }
    if (n == 0 || errno == EAGAIN) break;
    // EPIPE: records were overwritten since the last read; the next read
    // goes on from the oldest one kept.
    if (errno == EINTR || errno == EPIPE) continue;
    *error = path + ": " + strerror(errno);
    ok = !data->empty();  // what was read before the error still counts
    break;
  }
  close(fd);
  return ok;
}

// `dmesg` on the real root, for nodes where /dev/kmsg cannot be opened
// (a container without it). Its output is capped at kMaxExecOutput.
bool ReadDmesg(std::vector<KernelRecord>* records, std::string* error) {
  ExecResult r = RunProgram({"dmesg"}, Deadline::InSeconds(kDmesgDeadlineS));
  if (!r.started) {
    *error = r.error;
    return false;
  }
  if (r.timed_out || r.exit_code != 0) {
    std::string err = Trim(r.err);
    if (err.rfind("dmesg: ", 0) == 0) err = err.substr(7);
    *error = r.timed_out ? "did not finish within " +
                               std::to_string(static_cast<int>(kDmesgDeadlineS)) + " s"
             : err.empty() ? "exit code " + std::to_string(r.exit_code)
                           : err;
    return false;
  }
  for (const std::string& line : Lines(r.out)) {
    if (auto rec = ParseDmesgLine(line)) records->push_back(std::move(*rec));
  }
  return true;
}

json EventJson(const XidEvent& e) {
  return {{"kind", e.kind},
          {"code", e.code},
          {"device", e.device},
          {"boot_s", e.boot_s ? json(*e.boot_s) : json(nullptr)},
          {"text", e.text}};
}

// "events" is there in every case, so that a reader can walk it blindly.
json Skip(const std::string& reason) {
  return {{"status", "skip"}, {"reason", reason}, {"events", json::array()}};
}

}  // namespace

std::optional<KernelRecord> ParseKmsgRecord(const std::string& line) {
  if (line.empty() || line[0] == ' ') return std::nullopt;
  size_t semi = line.find(';');
  if (semi == std::string::npos) return std::nullopt;
  // pri,seq,usec[,flags[,more fields newer kernels may add]]
  std::vector<std::string> fields;
  std::istringstream in(line.substr(0, semi));
  std::string f;
  while (std::getline(in, f, ',')) fields.push_back(f);
  if (fields.size() < 3 || !Number(fields[0]) || !Number(fields[1])) return std::nullopt;
  auto usec = Number(fields[2]);
  if (!usec) return std::nullopt;
  std::string message = line.substr(semi + 1);
  if (!message.empty() && message.back() == '\r') message.pop_back();
  return KernelRecord{*usec / 1e6, message};
}

std::optional<KernelRecord> ParseDmesgLine(const std::string& line) {
  std::string s = line;
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n')) s.pop_back();
  if (Trim(s).empty()) return std::nullopt;
  size_t close = s[0] == '[' ? s.find(']') : std::string::npos;
  auto boot_s = close != std::string::npos ? Number(s.substr(1, close - 1)) : std::nullopt;
  if (!boot_s) return KernelRecord{std::nullopt, s};
  std::string rest = s.substr(close + 1);
  // CONFIG_PRINTK_CALLER adds "[T1234]" (a task) or "[C3]" (a CPU).
  size_t b = rest.find_first_not_of(' ');
  if (b != std::string::npos && rest[b] == '[') {
    size_t e = rest.find(']', b);
    std::string caller = e == std::string::npos ? "" : Trim(rest.substr(b + 1, e - b - 1));
    if (caller.size() > 1 && (caller[0] == 'T' || caller[0] == 'C') &&
        caller.find_first_not_of("0123456789", 1) == std::string::npos) {
      rest = rest.substr(e + 1);
    }
  }
  if (!rest.empty() && rest[0] == ' ') rest.erase(0, 1);
  return KernelRecord{boot_s, rest};
}

std::optional<XidEvent> ParseXidMessage(const KernelRecord& record) {
  const std::string& m = record.message;
  for (size_t p = m.find("Xid ("); p != std::string::npos; p = m.find("Xid (", p + 1)) {
    bool sxid = p > 0 && m[p - 1] == 'S';
    size_t word = sxid ? p - 1 : p;
    // The driver's prefix ends with ": " ("NVRM: ", "nvidia-nvswitch3: ").
    if (word < 2 || m.compare(word - 2, 2, ": ") != 0) continue;
    size_t open = p + 4, close = m.find("): ", open);
    if (close == std::string::npos) continue;
    const char* digits = m.c_str() + close + 3;
    char* end = nullptr;
    long code = std::strtol(digits, &end, 10);
    if (end == digits || code < 0) continue;
    XidEvent e;
    e.kind = sxid ? "SXid" : "Xid";
    e.code = static_cast<int>(code);
    e.device = m.substr(open + 1, close - open - 1);
    e.boot_s = record.boot_s;
    e.text = m;
    return e;
  }
  return std::nullopt;
}

std::optional<long long> ParseBootTime(const std::string& proc_stat) {
  for (const std::string& line : Lines(proc_stat)) {
    if (line.rfind("btime ", 0) != 0) continue;
    auto v = Number(line.substr(6));
    if (v) return static_cast<long long>(*v);
  }
  return std::nullopt;
}

json KernelLogSection(const KernelLog& log, std::optional<double> since_s,
                      std::optional<long long> boot_time_s) {
  json events = json::array();
  size_t dropped = 0;
  for (const KernelRecord& r : log.records) {
    auto e = ParseXidMessage(r);
    if (!e) continue;
    if (since_s && boot_time_s && e->boot_s &&
        static_cast<double>(*boot_time_s) + *e->boot_s < *since_s) {
      continue;
    }
    // The first events are kept: the first Xid of a fault names its cause,
    // the ones after are mostly its consequences.
    if (events.size() < kMaxXidEvents) {
      events.push_back(EventJson(*e));
    } else {
      ++dropped;
    }
  }
  json out = {{"status", "ok"},
              {"source", log.source},
              {"lines", log.records.size()},
              {"since_s", since_s ? json(*since_s) : json(nullptr)},
              {"events", events}};
  if (dropped > 0) out["dropped"] = dropped;
  if (since_s && !boot_time_s) {
    out["note"] = "boot time unknown (no btime in /proc/stat): since_s not applied";
  }
  return out;
}

json CollectKernelLog(const Sysroot& root, std::optional<double> since_s) {
  std::optional<long long> boot_time;
  if (auto stat = root.Read("/proc/stat"); stat.ok()) boot_time = ParseBootTime(*stat);
  KernelLog log;
  std::string data, kmsg_error;
  if (ReadKmsg(root.Path("/dev/kmsg"), &data, &kmsg_error)) {
    log.source = "/dev/kmsg";
    for (const std::string& line : Lines(data)) {
      if (auto rec = ParseKmsgRecord(line)) log.records.push_back(std::move(*rec));
    }
    return KernelLogSection(log, since_s, boot_time);
  }
  // A test sysroot without dev/kmsg has no kernel log; dmesg would read
  // this machine's.
  if (!root.IsReal()) return Skip("no kernel log: " + kmsg_error);
  std::string dmesg_error;
  if (!ReadDmesg(&log.records, &dmesg_error)) return Skip(kmsg_error + "; dmesg: " + dmesg_error);
  log.source = "dmesg";
  return KernelLogSection(log, since_s, boot_time);
}

}  // namespace cc::agent
