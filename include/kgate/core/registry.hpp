#pragma once
// The kernel-variant registry. A family is registered once (KGATE_REGISTER_FAMILY) and each
// variant registers itself with one line in its own file (KGATE_REGISTER_VARIANT); the
// correctness suite, the benchmark suite and the reports enumerate the registry, so adding a
// variant never means editing a list elsewhere.
#include <cuda_runtime.h>

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kgate/base/named_registry.hpp"
#include "kgate/core/family.hpp"
#include "kgate/core/problem.hpp"

namespace kgate {

// Declaration order is listing order: a family's tables read from its reference, through the
// vendor baseline, to kgate's own candidates.
enum class VariantRole {
  reference,  // the family's straightforward implementation that others are measured against
  vendor,     // a vendor library (cuBLAS, cuDNN) as the baseline to beat
  candidate,  // one of kgate's own implementations
};
std::string_view to_string(VariantRole role);

struct VariantInfo {
  std::string family;
  std::string name;
  std::string description;
  int min_compute_capability = 80;  // major * 10 + minor
  VariantRole role = VariantRole::candidate;
  // Benchmark shapes above this many FLOPs are recorded as skipped instead of timed (0: no limit).
  // For deliberately slow variants (a scalar reference, the first step of a journey) whose large
  // shapes would take most of a suite's time and tell nothing their small shapes do not.
  double max_bench_flops = 0;
  // The family's variant this one is the next step after, in the story its variants tell (naive,
  // then each optimization in turn); empty for a first step. The registry lists a family's
  // variants in that order, and the report measures each step against the one before it.
  std::string follows;
  std::string source_file;

  std::string full_name() const { return family + "/" + name; }
};

// Launches the variant on one copy of an instance, asynchronously on `stream`. Must be
// capturable into a CUDA graph: no synchronization, allocation or host reads of device data.
using LaunchFunction = std::function<void(const ProblemInstance&, int copy, cudaStream_t)>;

struct Variant {
  VariantInfo info;
  LaunchFunction launch;
};

class Registry {
 public:
  static Registry& instance();

  bool add_family(std::unique_ptr<Family> family);
  bool add_variant(Variant variant);

  // Families sorted by name; variants by family, role, their step in the family's journey (how
  // many `follows` lead back to a first step), then name. A variant whose family was never
  // registered, a duplicate name, or a `follows` that names no variant of the family or goes in
  // a circle makes validate() throw with every problem listed.
  std::vector<const Family*> families() const;
  const Family* find_family(std::string_view name) const;
  std::vector<const Variant*> variants() const;
  std::vector<const Variant*> variants_of(std::string_view family) const;
  const Variant* find_variant(std::string_view full_name) const;
  // The variant whose outputs are the expected values at `shape` (Family::device_reference), or
  // null where the family's host reference applies. Throws std::logic_error when the family names
  // a variant that is not registered.
  const Variant* device_reference(const Family& family, const Shape& shape) const;
  // Also checks every family's device references on its test shapes: each must be a registered
  // variant of the family, and at least one test shape must use the host reference, where that
  // variant is itself checked.
  void validate() const;

  // For tests that build private registries.
  Registry() = default;

 private:
  int journey_step(const Variant& v) const;

  NamedRegistry<Family> families_;
  NamedRegistry<Variant> variants_;  // by full name, "<family>/<variant>"
};

// Adapts a typed launch function to the registry's LaunchFunction.
template <class FamilyT>
Variant make_variant(VariantInfo info, void (*launch)(const typename FamilyT::Args&, cudaStream_t)) {
  info.family = FamilyT::kName;
  Variant variant{std::move(info), {}};
  variant.launch = [launch](const ProblemInstance& instance, int copy, cudaStream_t stream) {
    const auto& family = static_cast<const FamilyT&>(instance.family());
    launch(family.make_args(instance.shape(), instance.views(copy)), stream);
  };
  return variant;
}

}  // namespace kgate

// KGATE_REGISTER_FAMILY(RmsNormFamily);
#define KGATE_REGISTER_FAMILY(FamilyT) \
  KGATE_REGISTER_AT_STARTUP(family, ::kgate::Registry::instance().add_family(std::make_unique<FamilyT>()))

// KGATE_REGISTER_VARIANT(RmsNormFamily, launch_fn, {.name = "...", .description = "...", ...});
// The family name and source file are filled in; the braces are a kgate::VariantInfo.
#define KGATE_REGISTER_VARIANT(FamilyT, launch_fn, ...)                                                        \
  KGATE_REGISTER_AT_STARTUP(variant, ::kgate::Registry::instance().add_variant(::kgate::make_variant<FamilyT>( \
                                         [] {                                                                  \
                                           ::kgate::VariantInfo info = __VA_ARGS__;                            \
                                           info.source_file = __FILE__;                                        \
                                           return info;                                                        \
                                         }(),                                                                  \
                                         launch_fn)))
