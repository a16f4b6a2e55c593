// `clustercheck report [RUN]`, `clustercheck history` and `clustercheck
// diff A B`: read the store only, so any past run can be re-rendered.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace cc {

struct ReportOptions {
  std::string db_path;  // "" = DefaultStorePath()
  int64_t run_id = 0;   // 0 = the latest
  bool json = false;    // JSON (run, verdicts, node table) on stdout
  bool color = false;
  std::string html_path;   // also write the HTML page here; "" = none
  std::string junit_path;  // also write JUnit XML here; "" = none
  // A run to compare bandwidth with (bandwidth-outlier verdicts); 0 = none.
  int64_t baseline_run = 0;
  double outlier_fraction = 0.8;  // of the check's median
  double min_busbw_gbps = 0;      // floor; 0 = none
  std::FILE* out = stdout;
  std::FILE* err = stderr;
};

// 0 when rendered (whatever the run's outcome), 2 when the run or the
// database is missing or a file cannot be written.
int ReportCommand(const ReportOptions& options);
int HistoryCommand(const std::string& db_path, std::FILE* out, std::FILE* err);

struct DiffCommandOptions {
  std::string db_path;  // "" = DefaultStorePath()
  int64_t a = 0;        // the earlier run
  int64_t b = 0;        // the later run; 0 = the latest
  double tolerance = 0.10;
  bool json = false;
  std::FILE* out = stdout;
  std::FILE* err = stderr;
};

// 0 when nothing regressed or slowed, 1 when something did, 2 when a run
// or the database is missing.
int DiffCommand(const DiffCommandOptions& options);

}  // namespace cc
