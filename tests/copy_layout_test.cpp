// Where ProblemInstance puts a tensor's copies (copy_layout): where an instance has more than 16
// copies, a small tensor's in one allocation, each where cudaMalloc would align a buffer of its own
// and none overlapping the next; otherwise, and for a tensor of a large page or more, in
// allocations of its bytes exactly, one per copy.
#include <gtest/gtest.h>

#include <stdexcept>

#include "kgate/core/problem.hpp"

namespace {

constexpr std::size_t kLargePage = std::size_t{2} << 20;

TEST(CopyLayout, OneCopyIsAnAllocationOfTheTensorsBytes) {
  for (const std::size_t bytes : {std::size_t{1000}, std::size_t{4096}, kLargePage, 3 * kLargePage}) {
    const kgate::CopyLayout layout = kgate::copy_layout(bytes, 1);
    EXPECT_EQ(layout.allocations, 1) << bytes << " bytes";
    EXPECT_EQ(layout.allocation_bytes, bytes) << bytes << " bytes";
  }
}

TEST(CopyLayout, ASmallTensorsCopiesShareAnAllocationOn256ByteBoundaries) {
  for (const std::size_t bytes :
       {std::size_t{2}, std::size_t{254}, std::size_t{256}, std::size_t{258}, std::size_t{1} << 20, kLargePage - 2}) {
    for (const int copies : {17, 24, 138}) {
      const kgate::CopyLayout layout = kgate::copy_layout(bytes, copies);
      EXPECT_EQ(layout.allocations, 1) << bytes << " bytes";
      EXPECT_EQ(layout.stride % 256, 0u) << bytes << " bytes";
      EXPECT_GE(layout.stride, bytes) << bytes << " bytes";
      EXPECT_LT(layout.stride, bytes + 256) << bytes << " bytes";
      // The last copy ends where the allocation does.
      EXPECT_EQ(layout.allocation_bytes, layout.stride * static_cast<std::size_t>(copies - 1) + bytes) << bytes << " bytes";
    }
  }
}

TEST(CopyLayout, ALargeTensorHasAnAllocationPerCopy) {
  for (const std::size_t bytes : {kLargePage, std::size_t{134} << 20}) {
    const kgate::CopyLayout layout = kgate::copy_layout(bytes, 24);
    EXPECT_EQ(layout.allocations, 24) << bytes << " bytes";
    EXPECT_EQ(layout.allocation_bytes, bytes) << bytes << " bytes";
  }
}

TEST(CopyLayout, SixteenCopiesOrFewerHaveAnAllocationEach) {
  for (const int copies : {2, 9, 16}) {
    const kgate::CopyLayout layout = kgate::copy_layout(1000, copies);
    EXPECT_EQ(layout.allocations, copies) << copies << " copies";
    EXPECT_EQ(layout.allocation_bytes, 1000u) << copies << " copies";
  }
}

TEST(CopyLayout, AnEmptyTensorNeedsNoMemory) {
  EXPECT_EQ(kgate::copy_layout(0, 24).allocation_bytes, 0u);
  EXPECT_EQ(kgate::copy_layout(0, 2).allocation_bytes, 0u);
}

TEST(CopyLayout, RefusesNoCopies) { EXPECT_THROW(kgate::copy_layout(1000, 0), std::invalid_argument); }

}  // namespace
