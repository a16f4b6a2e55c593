// The "nccl" section (which libnccl.so.2 a job would load and its version)
// and the "nccl_env" section (NCCL_* settings from /etc/nccl.conf,
// ~/.nccl.conf, the environment and optionally the login shell, with
// warnings for settings that silently cost bandwidth or break init).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/sysroot.h"

namespace cc::agent {

using EnvMap = std::map<std::string, std::string>;

// Library ----------------------------------------------------------------
// ncclGetVersion's code -> "2.28.3" (2.9 and later: major*10000+minor*100+
// patch; before: major*1000+minor*100+patch).
std::string NcclVersionString(int code);
// The search order: inventory library paths, LD_LIBRARY_PATH, the standard
// folders, then the loader's own search for "libnccl.so.2".
std::vector<std::string> NcclCandidates(const std::vector<std::string>& library_paths,
                                        const std::string& ld_library_path);
// The build string NCCL prints in its log ("NCCL version 2.28.3+cuda12.9")
// found in the library's bytes: "2.28.3+cuda12.9" for `version` "2.28.3";
// nullopt when absent. It names the CUDA NCCL was built for.
std::optional<std::string> FindNcclBuildString(std::string_view bytes, const std::string& version);
// The "nccl" section. `candidates` empty: NcclCandidates(library_paths,
// $LD_LIBRARY_PATH).
nlohmann::json CollectNcclFacts(const std::vector<std::string>& library_paths,
                                const std::vector<std::string>& candidates = {});

// Environment ------------------------------------------------------------
// An nccl.conf: NAME=VALUE lines, '#' comments.
EnvMap ParseNcclConf(const std::string& text);
// NCCL_* entries of "NAME=VALUE" strings separated by `sep` ('\0' for
// env -0, '\n' otherwise).
EnvMap NcclVarsFromEnvText(const std::string& text, char sep);

// An interface list as NCCL reads NCCL_SOCKET_IFNAME and NCCL_IB_HCA:
// "^" excludes, "=" matches names exactly (else by prefix), comma list,
// ":port" suffixes ignored.
struct IfList {
  bool exclude = false;
  bool exact = false;
  std::vector<std::string> names;
};
IfList ParseIfList(const std::string& spec);
// Whether NCCL would use `name` under this list.
bool IfListSelects(const IfList& list, const std::string& name);

// Warnings for the effective NCCL settings. `source` names where each
// value came from; `interfaces` and `ib_devices` are the node's.
std::vector<std::string> NcclEnvWarnings(const EnvMap& effective, const EnvMap& source,
                                         const std::vector<std::string>& interfaces,
                                         const std::vector<std::string>& ib_devices);

struct NcclEnvOptions {
  EnvMap environ;          // the agent's NCCL_* variables
  std::string home;        // for ~/.nccl.conf ("" = none)
  bool login_env = false;  // also ask `bash -lc 'env -0'` (real root only)
  std::vector<std::string> interfaces;
  std::vector<std::string> ib_devices;
};
// The "nccl_env" section.
nlohmann::json CollectNcclEnv(const Sysroot& root, const NcclEnvOptions& options);

}  // namespace cc::agent
