#pragma once

#include <string>
#include <string_view>

namespace cc {

// Lower-case hex SHA-256 of `data` (OpenSSL).
std::string Sha256Hex(std::string_view data);

}  // namespace cc
