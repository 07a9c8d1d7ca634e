#pragma once
// The registry as JSON (kgate_bench --kgate_list_json): every family with its benchmark shapes and
// what kgate records about each, and the timing options kgate_bench would run with, so that
// programs outside kgate (scripts/peers/, which time them with kgate's engine) measure exactly the
// shapes kgate measures without keeping a copy of them. Needs no GPU. Format: docs/peers.md.
#include <string>

#include <nlohmann/json.hpp>

#include "kgate/core/registry.hpp"
#include "kgate/measure/timing.hpp"

namespace kgate {

inline constexpr int kListingSchemaVersion = 1;

nlohmann::json registry_listing(const Registry& registry, const TimingOptions& timing);

// Writes the listing to `destination` ("-": standard output). Returns the exit status.
int write_registry_listing(const std::string& destination, const TimingOptions& timing);

}  // namespace kgate
