// The health command's "kernel_log" section (docs/health-readings.md): the
// NVIDIA driver's Xid lines (a GPU fault: 79 fell off the bus, 48 a double
// bit ECC error, ...) and the NVSwitch driver's SXid lines, from the kernel
// log. Parsing is pure (a record or line in, an event out); reading takes
// /dev/kmsg under the sysroot, else `dmesg` on the real root.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/sysroot.h"

namespace cc::agent {

// One kernel log message with its time since boot, when known.
struct KernelRecord {
  std::optional<double> boot_s;
  std::string message;
};

// An Xid or SXid reported by a driver.
struct XidEvent {
  std::string kind;    // "Xid" or "SXid"
  int code = 0;        // 79, 12028, ...
  std::string device;  // what the parentheses hold: "PCI:0000:18:00"
  std::optional<double> boot_s;
  std::string text;  // the whole message, "NVRM: Xid (PCI:0000:18:00): 79, ..."
};

// A /dev/kmsg record "pri,seq,usec,flags;message" (boot_s = usec / 1e6).
// nullopt for a continuation line (it starts with a space: the record's
// KEY=value dictionary) and for text that is not a record.
std::optional<KernelRecord> ParseKmsgRecord(const std::string& line);

// A `dmesg` line "[  123.456789] message" (a "[T123]" caller id after the
// time is dropped). A line without the time is the message, boot_s unset;
// nullopt for an empty line.
std::optional<KernelRecord> ParseDmesgLine(const std::string& line);

// "NVRM: Xid (PCI:0000:18:00): 79, pid=..., ..." and
// "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, ..." -> the event;
// nullopt for any other message.
std::optional<XidEvent> ParseXidMessage(const KernelRecord& record);

// "btime" of /proc/stat: the boot time in unix seconds; nullopt when absent.
std::optional<long long> ParseBootTime(const std::string& proc_stat);

// The log as read: where from, and its records in order.
struct KernelLog {
  std::string source;  // "/dev/kmsg" or "dmesg"
  std::vector<KernelRecord> records;
};

inline constexpr size_t kMaxXidEvents = 200;

// The section for a log that was read: {"status": "ok", "source", "lines",
// "since_s", "events", "dropped" (when more than kMaxXidEvents)}. With
// since_s and a boot time, events older than since_s are left out; events
// without a time are kept. With since_s but no boot time nothing is left
// out and "note" says so.
nlohmann::json KernelLogSection(const KernelLog& log, std::optional<double> since_s,
                                std::optional<long long> boot_time_s);

// Reads <root>/dev/kmsg (non-blocking, until EAGAIN or end of file), else
// on the real root runs `dmesg` under a deadline, and makes the section.
// {"status": "skip", "reason", "events": []} when neither can be read.
nlohmann::json CollectKernelLog(const Sysroot& root, std::optional<double> since_s);

}  // namespace cc::agent
