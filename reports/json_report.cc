#include "reports/json_report.h"

#include "reports/node_table.h"
#include "reports/retests.h"
#include "reports/terminal.h"

namespace cc {

nlohmann::json ReportJson(const RunData& data, const std::vector<Verdict>& verdicts) {
  nlohmann::json j = RunDataToJson(data);
  j["verdict"] = VerdictLine(data);
  j["verdicts"] = VerdictsToJson(verdicts);
  j["node_table"] = NodeTableToJson(BuildNodeTable(data));
  // Only runs that retested something say so (confirm.h).
  auto retests = RetestsOf(data);
  if (!retests.empty()) j["retests"] = RetestsJson(retests);
  return j;
}

}  // namespace cc
