// Secrets and nonces: `bytes` random bytes from /dev/urandom, as lowercase
// hex (2 * bytes characters). Falls back to std::random_device when
// /dev/urandom cannot be read.
#pragma once

#include <cstddef>
#include <string>

namespace cc {

std::string RandomHex(size_t bytes);

}  // namespace cc
