#include <gtest/gtest.h>

#include <cmath>

#include "kgate/results/roofline.hpp"

using kgate::Ceilings;
using kgate::RooflineClass;
using kgate::place_on_roofline;

namespace {

// Powers of two, so the percentages at the boundaries come out exact.
const Ceilings kCeilings{.memory_bytes_per_s = 0x1.0p40, .compute_flops_per_s = 0x1.0p47, .launch_floor_s = 0x1.0p-20};

}  // namespace

TEST(Roofline, ThroughputPercentagesAndIntensity) {
  const auto p = place_on_roofline(0x1.0p30, 0x1.0p32, 0x1.0p-9, kCeilings);
  EXPECT_EQ(p.bytes_per_s, 0x1.0p39);
  EXPECT_EQ(p.flops_per_s, 0x1.0p41);
  EXPECT_EQ(p.pct_of_memory, 50.0);
  EXPECT_EQ(p.pct_of_compute, 100.0 / 64);
  EXPECT_EQ(p.arithmetic_intensity, 4.0);  // flops / bytes
}

TEST(Roofline, EachClass) {
  // A streaming kernel at 80% of the bandwidth.
  EXPECT_EQ(place_on_roofline(0x1.0p30, 0x1.0p30, 0x1.4p-10, kCeilings).cls, RooflineClass::memory_bound);
  // A GEMM-like kernel at 80% of the compute ceiling.
  EXPECT_EQ(place_on_roofline(0x1.0p30, 0x1.0p40, 0x1.4p-7, kCeilings).cls, RooflineClass::compute_bound);
  // Enough work to leave the launch floor behind, but 25% of either roof: neither approached.
  EXPECT_EQ(place_on_roofline(0x1.0p30, 0x1.0p30, 0x1.0p-8, kCeilings).cls, RooflineClass::below_roofs);
  // 64 KiB: the roofline says 2^-24 s, a launch costs 2^-20 s.
  EXPECT_EQ(place_on_roofline(0x1.0p16, 0x1.0p16, 0x1.0p-19, kCeilings).cls, RooflineClass::latency_bound);
}

TEST(Roofline, LatencyBoundTakesPrecedenceOverAHighPercentage) {
  // 2^19 bytes in 2^-20 s is 50% of the bandwidth, yet the work needs only half a launch.
  const auto p = place_on_roofline(0x1.0p19, 0, 0x1.0p-20, kCeilings);
  EXPECT_EQ(p.pct_of_memory, 50.0);
  EXPECT_EQ(p.cls, RooflineClass::latency_bound);
}

TEST(Roofline, LatencyBoundaryIsStrictlyBelowTheFloor) {
  // 2^20 bytes: the roofline's lower bound equals the launch floor, so it is not latency-bound.
  EXPECT_EQ(place_on_roofline(0x1.0p20, 0, 0x1.0p-19, kCeilings).cls, RooflineClass::memory_bound);
  EXPECT_EQ(place_on_roofline(0x1.0p20 - 1, 0, 0x1.0p-19, kCeilings).cls, RooflineClass::latency_bound);
  // The compute side of the bound counts too: 2^27 flops also take 2^-20 s at the compute ceiling.
  EXPECT_EQ(place_on_roofline(0x1.0p10, 0x1.0p27, 0x1.0p-19, kCeilings).cls, RooflineClass::compute_bound);
}

TEST(Roofline, ThresholdBoundaries) {
  // Exactly at the 50% threshold counts as bound.
  EXPECT_EQ(place_on_roofline(0x1.0p30, 0, 0x1.0p-9, kCeilings).cls, RooflineClass::memory_bound);
  EXPECT_EQ(place_on_roofline(0x1.0p20, 0x1.0p37, 0x1.0p-9, kCeilings).cls, RooflineClass::compute_bound);
  // Just under it does not.
  EXPECT_EQ(place_on_roofline(0x1.0p30 - 1, 0, 0x1.0p-9, kCeilings).cls, RooflineClass::below_roofs);
  EXPECT_EQ(place_on_roofline(0x1.0p20, 0x1.0p37 - 1, 0x1.0p-9, kCeilings).cls, RooflineClass::below_roofs);
  // Both roofs at the same percentage: memory wins the tie.
  EXPECT_EQ(place_on_roofline(0x1.0p30, 0x1.0p37, 0x1.0p-9, kCeilings).cls, RooflineClass::memory_bound);
  // A lower threshold moves the line.
  EXPECT_EQ(place_on_roofline(0x1.0p30, 0, 0x1.0p-8, kCeilings, {.bound_threshold_pct = 25.0}).cls, RooflineClass::memory_bound);
}

TEST(Roofline, HigherPercentageDecidesWhenBothRoofsAreApproached) {
  // 75% of memory and 100% of compute: compute.
  EXPECT_EQ(place_on_roofline(0x1.8p30, 0x1.0p38, 0x1.0p-9, kCeilings).cls, RooflineClass::compute_bound);
  // 100% of memory and 75% of compute: memory.
  EXPECT_EQ(place_on_roofline(0x1.0p31, 0x1.8p37, 0x1.0p-9, kCeilings).cls, RooflineClass::memory_bound);
}

TEST(Roofline, NoBytesGivesZeroIntensity) {
  const auto p = place_on_roofline(0, 0x1.0p40, 0x1.0p-7, kCeilings);
  EXPECT_EQ(p.arithmetic_intensity, 0.0);
  EXPECT_EQ(p.cls, RooflineClass::compute_bound);
}

TEST(Roofline, BadTimeOrMissingCeilingsAreErrors) {
  EXPECT_THROW(place_on_roofline(1e9, 1e9, 0, kCeilings), std::invalid_argument);
  EXPECT_THROW(place_on_roofline(1e9, 1e9, -1e-3, kCeilings), std::invalid_argument);
  EXPECT_THROW(place_on_roofline(1e9, 1e9, NAN, kCeilings), std::invalid_argument);
  EXPECT_THROW(place_on_roofline(-1, 1e9, 1e-3, kCeilings), std::invalid_argument);
  EXPECT_THROW(place_on_roofline(1e9, NAN, 1e-3, kCeilings), std::invalid_argument);
  EXPECT_THROW(place_on_roofline(1e9, 1e9, 1e-3, Ceilings{}), std::invalid_argument);
  for (double Ceilings::*ceiling : {&Ceilings::memory_bytes_per_s, &Ceilings::compute_flops_per_s, &Ceilings::launch_floor_s}) {
    Ceilings missing_one = kCeilings;
    missing_one.*ceiling = 0;
    EXPECT_THROW(place_on_roofline(1e9, 1e9, 1e-3, missing_one), std::invalid_argument);
  }
  EXPECT_THROW(place_on_roofline(1e9, 1e9, 1e-3, kCeilings, {.bound_threshold_pct = 0}), std::invalid_argument);
  EXPECT_THROW(place_on_roofline(1e9, 1e9, 1e-3, kCeilings, {.bound_threshold_pct = 101}), std::invalid_argument);
}

TEST(Roofline, ClassNamesRoundTrip) {
  EXPECT_EQ(kgate::to_string(RooflineClass::memory_bound), "memory-bound");
  EXPECT_EQ(kgate::to_string(RooflineClass::compute_bound), "compute-bound");
  EXPECT_EQ(kgate::to_string(RooflineClass::latency_bound), "latency-bound");
  EXPECT_EQ(kgate::to_string(RooflineClass::below_roofs), "below-roofs");
  EXPECT_EQ(kgate::parse_roofline_class("balanced"), RooflineClass::below_roofs);  // its old name, in older files
  for (auto c : {RooflineClass::memory_bound, RooflineClass::compute_bound, RooflineClass::latency_bound, RooflineClass::below_roofs})
    EXPECT_EQ(kgate::parse_roofline_class(kgate::to_string(c)), c);
  EXPECT_EQ(kgate::parse_roofline_class("memory_bound"), std::nullopt);
  EXPECT_EQ(kgate::parse_roofline_class(""), std::nullopt);
}
