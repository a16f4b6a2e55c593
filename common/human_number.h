// Numbers in messages, for people: "120 s", "1.5 s", "0.25", never
// std::to_string's "120.000000". Pure.
#pragma once

#include <string>

namespace cc {

// `v` with at most `decimals` decimals, trailing zeros and a trailing
// point dropped: 120 -> "120", 1.50 -> "1.5", 0.333 -> "0.33". NaN and
// infinities print as "nan", "inf", "-inf".
std::string FormatNumber(double v, int decimals = 2);

// FormatNumber(s) + " s": 120 -> "120 s".
std::string FormatSeconds(double s);

}  // namespace cc
