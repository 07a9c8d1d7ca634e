// How many input copies a cold benchmark rotates among (kgate/suite/benchmark_plan.hpp, input_copies).
#include <gtest/gtest.h>

#include "kgate/suite/benchmark_plan.hpp"

namespace {

using kgate::input_copies;

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kL2 = 60 * kMiB;
constexpr double kBudget = 4.0 * (1ull << 30);

TEST(InputCopies, CopiesThatFitInTheL2CoverItTwice) {
  EXPECT_EQ(input_copies(30 * kMiB, kL2, 1, kBudget), 4);
  EXPECT_EQ(input_copies(50 * kMiB, kL2, 1, kBudget), 3);   // rounded up
  EXPECT_EQ(input_copies(10 * kMiB, kL2, 8, kBudget), 12);  // more than the placements ask for
  EXPECT_EQ(input_copies(64 * 1024, kL2, 8, kBudget), kgate::kMaxInputCopies);
}

TEST(InputCopies, CopiesLargerThanTheL2RotateForPlacementsAlone) {
  EXPECT_EQ(input_copies(kL2, kL2, 1, kBudget), 1);
  EXPECT_EQ(input_copies(235 * kMiB, kL2, 8, kBudget), 8);
  EXPECT_EQ(input_copies(235 * kMiB, kL2, 3, kBudget), 3);
  EXPECT_EQ(input_copies(50 * kMiB, kL2, 8, kBudget), 8);  // placements above the L2's 3
}

TEST(InputCopies, PlacementsStayWithinTheBudget) {
  EXPECT_EQ(input_copies(1024 * kMiB, kL2, 8, kBudget), 4);
  EXPECT_EQ(input_copies(3000 * kMiB, kL2, 8, kBudget), 1);
  EXPECT_EQ(input_copies(5000 * kMiB, kL2, 8, kBudget), 1);      // one copy even past the budget (the plan skips it if it does not fit)
  EXPECT_EQ(input_copies(235 * kMiB, kL2, 8, 500.0 * kMiB), 2);  // a device with little free memory
  EXPECT_EQ(input_copies(235 * kMiB, kL2, 8, -1.0), 1);
  // The L2 cover is not held to the budget: it is small by construction.
  EXPECT_EQ(input_copies(30 * kMiB, kL2, 8, 10.0 * kMiB), 4);
}

TEST(InputCopies, AnEmptyInstanceHasOneCopy) { EXPECT_EQ(input_copies(0, kL2, 8, kBudget), 1); }

}  // namespace
