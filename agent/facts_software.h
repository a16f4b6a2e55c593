// Software facts that are neither GPU libraries nor NCCL: glibc, the RDMA
// stack (IB devices, rdma-core, MLNX OFED, nvidia_peermem, DMA-BUF), Open
// MPI and PyTorch. Parsers are pure; Collect* do the I/O. Facts that need a
// helper program (ompi_info, python, ofed_info) only run on the real root.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "agent/facts_exec.h"
#include "agent/sysroot.h"

namespace cc::agent {

// glibc ------------------------------------------------------------------
// "... stable release version 2.36." inside libc.so.6 -> "2.36".
std::optional<std::string> ParseGlibcBanner(const std::string& libc_bytes);
// {"version": "2.36" | null, "source": "...", "reason"?}. The real root asks
// the loaded glibc; a fixture root reads the banner from its libc.so.6.
nlohmann::json GlibcVersion(const Sysroot& root);

// RDMA -------------------------------------------------------------------
// "libibverbs.so.1.14.44.0" -> "44.0" (rdma-core puts its version in the
// file name). The first matching name wins.
std::optional<std::string> RdmaCoreFromVerbsNames(const std::vector<std::string>& names);
// Upstream version ("44.0" of "44.0-2") of an installed package in a
// dpkg status file; nullopt when absent or not installed.
std::optional<std::string> DpkgVersion(const std::string& status, const std::string& package);
// `ofed_info -s` -> "MLNX_OFED_LINUX-23.10-0.5.5.0" (trailing ':' dropped).
std::optional<std::string> ParseOfedInfo(const std::string& out);
// "5.15.0-105-generic" >= (5, 12)? False when unparsable.
bool KernelAtLeast(const std::string& release, int major, int minor);
// /proc/driver/nvidia/version -> {"version": "550.54.15", "flavor":
// "open"|"proprietary"}; null when unparsable.
nlohmann::json ParseNvidiaDriverVersion(const std::string& text);
// "4: ACTIVE" -> "ACTIVE".
std::string StripSysfsEnumPrefix(const std::string& s);

// The "rdma" section.
nlohmann::json CollectRdmaFacts(const Sysroot& root);

// Open MPI ---------------------------------------------------------------
// `ompi_info --parsable` -> "4.1.6" from "ompi:version:full:4.1.6".
std::optional<std::string> ParseOmpiInfoVersion(const std::string& out);
// The "mpi" section.
nlohmann::json CollectMpiFacts(const Sysroot& root);

// PyTorch ----------------------------------------------------------------
// The script run as `<python> -c <script>`; prints one JSON line.
const char* TorchProbeScript();
// Turns the probe's run into the "torch" section.
nlohmann::json TorchFactsFromRun(const std::string& python, const ExecResult& run);
// The "torch" section; skip when python is empty or the root is a fixture.
nlohmann::json CollectTorchFacts(const Sysroot& root, const std::string& python);

}  // namespace cc::agent
