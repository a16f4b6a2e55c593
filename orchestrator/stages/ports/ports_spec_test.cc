#include "orchestrator/stages/ports/ports_spec.h"

#include <gtest/gtest.h>

#include "orchestrator/stages/ports/ports_plan.h"

namespace cc {
namespace {

TEST(PortsSpec, TheDocumentedDefaultsAreTheStagesOwn) {
  nlohmann::json defaults = PortsSpec().DocumentedDefaults();
  EXPECT_EQ(defaults.size(), PortsSpec().settings.size());
  Result<PortsSettings> documented = ReadPortsSettings(defaults);
  Result<PortsSettings> unset = ReadPortsSettings(nlohmann::json::object());
  ASSERT_TRUE(documented.ok() && unset.ok());
  EXPECT_EQ(documented->ports, unset->ports);
  EXPECT_EQ(documented->ephemeral_samples, unset->ephemeral_samples);
  EXPECT_EQ(documented->timeout_ms, unset->timeout_ms);
  EXPECT_EQ(documented->parallel, unset->parallel);
  EXPECT_EQ(documented->senders_per_receiver, unset->senders_per_receiver);
}

TEST(PortsSpec, ItsPairChecksAreDirected) { EXPECT_TRUE(PortsSpec().pairs_directed); }

}  // namespace
}  // namespace cc
