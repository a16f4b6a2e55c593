// Lists in messages for people: "a, b, c".
#pragma once

#include <string>
#include <vector>

namespace cc {

// The items in order with `sep` between them; "" for none.
std::string Join(const std::vector<std::string>& items, const std::string& sep);

}  // namespace cc
