// Where ProblemInstance puts a tensor's copies in the one allocation that holds them: each copy
// where cudaMalloc would align a buffer of its own, none overlapping the next, and with one copy
// (the correctness suite, compute-sanitizer) an allocation of the tensor's bytes exactly.
#include <gtest/gtest.h>

#include <stdexcept>

#include "kgate/core/problem.hpp"

namespace {

TEST(CopyLayout, OneCopyIsTheTensorsBytesExactly) {
  EXPECT_EQ(kgate::copy_layout(1000, 1).allocation_bytes, 1000u);
  EXPECT_EQ(kgate::copy_layout(4096, 1).allocation_bytes, 4096u);
}

TEST(CopyLayout, CopiesStartOn256ByteBoundariesAndDoNotOverlap) {
  for (const std::size_t bytes : {2u, 254u, 256u, 258u, 1000u, 1u << 20}) {
    for (const int copies : {2, 3, 138}) {
      const kgate::CopyLayout layout = kgate::copy_layout(bytes, copies);
      EXPECT_EQ(layout.stride % 256, 0u) << bytes << " bytes";
      EXPECT_GE(layout.stride, bytes) << bytes << " bytes";
      EXPECT_LT(layout.stride, bytes + 256) << bytes << " bytes";
      // The last copy ends where the allocation does.
      EXPECT_EQ(layout.allocation_bytes, layout.stride * static_cast<std::size_t>(copies - 1) + bytes) << bytes << " bytes";
    }
  }
}

TEST(CopyLayout, AnEmptyTensorNeedsNoAllocation) { EXPECT_EQ(kgate::copy_layout(0, 24).allocation_bytes, 0u); }

TEST(CopyLayout, RefusesNoCopies) { EXPECT_THROW(kgate::copy_layout(1000, 0), std::invalid_argument); }

}  // namespace
