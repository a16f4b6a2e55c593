#include "common/outcome.h"

namespace cc {

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kWarn:
      return "warn";
    case Outcome::kFail:
      return "fail";
    case Outcome::kHang:
      return "hang";
    case Outcome::kSkip:
      return "skip";
    case Outcome::kError:
      return "error";
  }
  return "error";
}

std::optional<Outcome> ParseOutcome(std::string_view s) {
  for (Outcome o : {Outcome::kPass, Outcome::kWarn, Outcome::kFail, Outcome::kHang, Outcome::kSkip,
                    Outcome::kError}) {
    if (s == OutcomeName(o)) return o;
  }
  return std::nullopt;
}

int OutcomeSeverity(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return 0;
    case Outcome::kSkip:
      return 1;
    case Outcome::kWarn:
      return 2;
    case Outcome::kError:
      return 3;
    case Outcome::kFail:
      return 4;
    case Outcome::kHang:
      return 5;
  }
  return 3;
}

}  // namespace cc
