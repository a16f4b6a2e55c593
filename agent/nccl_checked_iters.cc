#include "agent/nccl_checked_iters.h"

namespace cc::agent {

using nlohmann::json;

void NcclCheckedIters::Add(size_t wrong, const json& first_wrong) {
  ++iters;
  if (wrong == 0) return;
  ++mismatched;
  if (first_iter != 0) return;
  // The first bad iteration is the one to look at: later ones may only
  // repeat its damage (a sticky fault) or be noise after it.
  first_iter = iters;
  first_elements = wrong;
  first = first_wrong;
}

void NcclCheckedIters::AddTo(json* size) const {
  (*size)["checked_iters"] = iters;
  (*size)["check_mismatches"] = mismatched;
  if (mismatched == 0) return;
  json f = first.is_object() ? first : json::object();
  f["iter"] = first_iter;
  f["elements"] = first_elements;
  (*size)["first_check_mismatch"] = f;
  (*size)["data_ok"] = false;
}

std::string NcclDataFailure(const json& size, const std::string& at) {
  std::string why;
  const json mismatches = size.value("mismatches", json(0));
  if (mismatches.is_number() && mismatches.get<double>() > 0) {
    why =
        mismatches.dump() + " wrong elements, first " + size.value("first_mismatch", json()).dump();
  }
  const int bad_iters = size.value("check_mismatches", 0);
  if (bad_iters > 0) {
    json f = size.value("first_check_mismatch", json::object());
    json element = f;
    element.erase("iter");
    element.erase("elements");
    if (!why.empty()) why += "; ";
    why += std::to_string(bad_iters) + " of " + std::to_string(size.value("checked_iters", 0)) +
           " checked iterations not exact, first iteration " + f.value("iter", json()).dump() +
           " (" + f.value("elements", json()).dump() + " wrong elements, first " + element.dump() +
           ")";
  }
  if (why.empty() && !size.value("data_ok", false)) why = "data not exact";
  return why.empty() ? "" : "data check failed at " + at + ": " + why;
}

}  // namespace cc::agent
