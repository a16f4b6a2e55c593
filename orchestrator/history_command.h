// `clustercheck report [RUN]` and `clustercheck history`: read the store
// only, so any past run can be re-rendered.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace cc {

struct ReportOptions {
  std::string db_path;   // "" = DefaultStorePath()
  int64_t run_id = 0;    // 0 = the latest
  bool json = false;
  bool color = false;
  std::FILE* out = stdout;
  std::FILE* err = stderr;
};

// 0 when rendered, 2 when the run or the database is missing.
int ReportCommand(const ReportOptions& options);
int HistoryCommand(const std::string& db_path, std::FILE* out, std::FILE* err);

}  // namespace cc
