// The store's schema as ordered migrations: step i takes PRAGMA
// user_version i to i+1 (Store::Migrate runs them, each in a transaction).
#pragma once

namespace cc {

// Append only; never edit a released step (old databases replay them in
// order). Store::kSchemaVersion is their number.
extern const char* const kSchemaMigrations[5];

}  // namespace cc
