// Deterministic mutations of a stored run's JSON (evidence of results and
// verdicts, run meta, node facts), for the report fuzz test
// (report_fuzz_test.cc): what another version, another stage or a bug
// could have stored. Defined in evidence_mutator_test.cc, so only the test
// binary has it.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "orchestrator/store/run_data.h"

namespace cc::testdata {

class EvidenceMutator {
 public:
  // What Mutate changes: the evidence of node results, pair results and
  // verdicts; or the run meta, the nodes' facts and (as bytes that are
  // not UTF-8, a shell banner's Latin-1) the results' messages.
  enum class Targets { kEvidence, kMetaFactsAndMessages };

  // `keys`: member names to add, more often than those the mutator finds
  // in the runs it mutates (AddKeysOf), so that the names analysis reads
  // come up.
  EvidenceMutator(uint64_t seed, std::vector<std::string> keys,
                  Targets targets = Targets::kEvidence);

  // Learns every member name of `run`'s JSON, so that a mutation can put
  // one stage's keys into another's evidence.
  void AddKeysOf(const RunData& run);

  // Mutates one JSON value of the targets in `run`: changes its type
  // (string, number, array, object, null, boolean, huge or negative
  // numbers), drops a member or an element, or adds a member of a known
  // name holding a value of any shape; the target may be a whole evidence.
  // Returns what it did, for a failure message ("verdicts[2]
  // (port-blocked ports/tcp/29500) evidence/symptoms: set to 7").
  std::string Mutate(RunData& run);

 private:
  nlohmann::json RandomValue(int depth);
  std::string RandomString();
  std::string Mutate(nlohmann::json& root);
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(rng_() % n); }

  std::string RandomKey();

  std::mt19937_64 rng_;
  Targets targets_;
  std::vector<std::string> keys_;     // as given
  std::vector<std::string> learned_;  // AddKeysOf's, sorted
};

}  // namespace cc::testdata
