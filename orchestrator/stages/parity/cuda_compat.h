// Which Linux driver a CUDA runtime needs, from NVIDIA's tables, and the
// two judgements built on them: is this node's driver new enough for the
// CUDA that PyTorch or NCCL was built for, and does the CUDA version the
// driver reports (cuDriverGetVersion) cover it.
//
// Two levels, as NVIDIA defines them:
//   - the toolkit driver of a CUDA release (12.4 -> 550.54.14): everything
//     works;
//   - minor version compatibility (12.x -> >= 525.60.13): an application
//     built with any 12.x runs on an older 12.x-family driver, with a
//     limited feature set (no JIT of PTX newer than the driver).
// Below the family minimum the runtime does not start.
//
// Pure functions; no I/O, thread-safe.
#pragma once

#include <optional>
#include <string>

#include "common/outcome.h"

namespace cc {

// "12.4", "12.4.1", "12.4.131", "12040" (cuDriverGetVersion as a number)
// -> "12.4". nullopt for anything else.
std::optional<std::string> CudaMajorMinor(const std::string& cuda);

// The driver that ships with the GA release of that CUDA major.minor
// (NVIDIA's "toolkit driver version"): "12.4" -> "550.54.14". nullopt when
// the release is not in the table (a typo, 12.7, or newer than the table).
std::optional<std::string> MinimumDriverFor(const std::string& cuda);

// The oldest driver of the CUDA major family under minor version
// compatibility: "12.4" -> "525.60.13". nullopt before CUDA 11 or after
// the table's last major.
std::optional<std::string> MinorCompatDriverFor(const std::string& cuda);

// The last CUDA release in the table ("13.2"), for messages.
std::string NewestCudaInTable();

// The CUDA an NCCL version string says it was built for:
// "2.28.9+cuda13.0" -> "13.0"; "2.21.5" -> nullopt.
std::optional<std::string> CudaFromNcclVersion(const std::string& nccl);

struct CompatVerdict {
  Outcome outcome = Outcome::kError;
  std::string required;  // what was needed (">=550.54.14"), for `expected`
  std::string message;   // for people; names the values and who needs them
};

// Judges `driver` ("550.54.15") against CUDA `cuda` ("12.4") needed by
// `needed_by` ("torch 2.3.0 built for CUDA 12.4"):
//   pass  driver >= the toolkit driver;
//   warn  below it but within minor version compatibility;
//   fail  below the family minimum;
//   skip  CUDA release not in the table (the cuda_driver check still runs);
//   error driver or CUDA not a version.
CompatVerdict JudgeDriverForCuda(const std::string& driver, const std::string& cuda,
                                 const std::string& needed_by);

// Judges the CUDA version the driver supports (`cuda_driver`, "12.4" or
// "12040") against `cuda`: pass when >=; warn when the same major but an
// older minor (minor version compatibility); fail when an older major;
// error when either is not a CUDA version.
CompatVerdict JudgeCudaDriverVersion(const std::string& cuda_driver, const std::string& cuda,
                                     const std::string& needed_by);

}  // namespace cc
