#include "common/human_number.h"

#include <cmath>
#include <cstdio>

namespace cc {

std::string FormatNumber(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (decimals < 0) decimals = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string t = buf;
  if (t.find('.') != std::string::npos) {
    t.erase(t.find_last_not_of('0') + 1);
    if (!t.empty() && t.back() == '.') t.pop_back();
  }
  if (t == "-0") t = "0";
  return t;
}

std::string FormatSeconds(double s) { return FormatNumber(s) + " s"; }

}  // namespace cc
