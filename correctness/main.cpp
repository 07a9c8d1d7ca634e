// The GPU correctness suite: one GoogleTest case per registered variant x test shape, registered
// from the kernel registry at start-up, and one per family that checks its host reference on the
// CPU (host_reference.<family>, which needs no GPU). Under ctest each case runs in its own process
// (gtest_discover_tests), so a variant that faults fails its own cases and no others.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "kgate/base/phase_clock.hpp"
#include "kgate/core/ctest_gpu.hpp"
#include "kgate/measure/device.hpp"
#include "kgate/base/random.hpp"
#include "kgate/core/reference_check.hpp"
#include "kgate/core/registry.hpp"

namespace {

class VariantCase : public ::testing::Test {
 public:
  VariantCase(const kgate::Variant* variant, kgate::Shape shape) : variant_(variant), shape_(std::move(shape)) {}

  void TestBody() override {
    const kgate::DeviceProbe& probe = kgate::probe_device();
    if (!probe.device) GTEST_SKIP() << probe.reason;
    if (probe.device->compute_capability < variant_->info.min_compute_capability)
      GTEST_SKIP() << variant_->info.full_name() << " needs compute capability " << variant_->info.min_compute_capability << ", "
                   << probe.device->name << " has " << probe.device->compute_capability;

    const kgate::Registry& registry = kgate::Registry::instance();
    const kgate::Family& family = *registry.find_family(variant_->info.family);
    // Where the host reference is too costly, the family's device reference supplies the expected
    // values; comparing that variant with itself could not fail.
    const kgate::Variant* device_reference = registry.device_reference(family, shape_);
    if (device_reference == variant_)
      GTEST_SKIP() << variant_->info.full_name() << " is the reference at " << shape_.id()
                   << " (it is checked against the fp64 host reference on the smaller test shapes)";
    const std::uint64_t base_seed = kgate::session_seed();
    const std::uint64_t seed = kgate::derive_seed(base_seed, variant_->info.full_name() + "/" + shape_.id());

    // Where a case's time goes, as GoogleTest properties (inputs_s, launch_s, check_s) that
    // scripts/gpu_tests.py sums over the suite.
    kgate::PhaseSeconds steps;
    kgate::PhaseClock clock(steps);
    kgate::ProblemInstance instance(family, shape_);
    instance.fill_inputs(seed, /*keep_host_copy=*/device_reference == nullptr);
    instance.poison_outputs();
    clock.lap("inputs");
    try {
      variant_->launch(instance, 0, nullptr);
    } catch (const kgate::UnsupportedShape& unsupported) {
      GTEST_SKIP() << variant_->info.full_name() << " does not handle " << shape_.id() << ": " << unsupported.what();
    }
    KGATE_CUDA_CHECK(cudaGetLastError());
    KGATE_CUDA_CHECK(cudaDeviceSynchronize());
    clock.lap("launch");

    const kgate::InstanceCheck check = instance.check();
    clock.lap("check");
    for (const auto& [step, seconds] : steps) RecordProperty(step + "_s", std::to_string(seconds));
    EXPECT_TRUE(check.passed()) << variant_->info.full_name() << " at " << shape_.id() << " differs from " << check.reference << "\n"
                                << check.describe() << "\nreproduce with KGATE_SEED=" << base_seed << " (case seed " << seed << ")";
  }

 private:
  const kgate::Variant* variant_;
  kgate::Shape shape_;
};

// The family's fp64 host reference on its smallest test shape, on the CPU (reference_check.hpp):
// runs without a GPU, so a user without one learns when the reference itself is wrong.
class HostReferenceCase : public ::testing::Test {
 public:
  explicit HostReferenceCase(const kgate::Family* family) : family_(family) {}

  void TestBody() override {
    const std::uint64_t base_seed = kgate::session_seed();
    const kgate::ReferenceCheck check = kgate::check_host_reference(*family_, kgate::smallest_host_reference_shape(*family_),
                                                                    kgate::derive_seed(base_seed, "host_reference/" + family_->name()));
    EXPECT_TRUE(check.passed()) << check.describe() << "\nreproduce with KGATE_SEED=" << base_seed;
  }

 private:
  const kgate::Family* family_;
};

void register_cases() {
  const kgate::Registry& registry = kgate::Registry::instance();
  registry.validate();
  for (const kgate::Family* family : registry.families())
    ::testing::RegisterTest("host_reference", family->name().c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [family]() -> ::testing::Test* { return new HostReferenceCase(family); });
  for (const kgate::Variant* variant : registry.variants()) {
    const kgate::Family* family = registry.find_family(variant->info.family);
    for (const kgate::Shape& shape : family->test_shapes()) {
      ::testing::RegisterTest(variant->info.full_name().c_str(), shape.test_id().c_str(), nullptr, nullptr,
                              variant->info.source_file.c_str(), 0,
                              [variant, shape]() -> ::testing::Test* { return new VariantCase(variant, shape); });
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {  // before anything touches CUDA: the GPU ctest gave this test (RESOURCE_GROUPS gpus:1)
    if (const std::string gpu = kgate::use_ctest_gpu(); !gpu.empty()) std::fprintf(stderr, "kgate: %s\n", gpu.c_str());
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "kgate_correctness: %s\n", e.what());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  // Listing (gtest_discover_tests, at build time) needs no GPU, even where KGATE_REQUIRE_GPU=1.
  if (!GTEST_FLAG_GET(list_tests)) {
    if (const std::string unmet = kgate::unmet_gpu_requirement(kgate::probe_device().reason); !unmet.empty()) {
      std::fprintf(stderr, "kgate_correctness: %s\n", unmet.c_str());
      return 1;
    }
    // The CUDA context, made before the first case rather than in it, so that each case's time is
    // its own: CUDA's start took 0.4 s on an H200 alone, 3-4 s while 16 processes started at once.
    if (kgate::probe_device().device) cudaFree(nullptr);
  }
  register_cases();
  return RUN_ALL_TESTS();
}
