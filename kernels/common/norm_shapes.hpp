#pragma once
// Row-normalization shapes (m rows of n elements), shared by RMSNorm and fused add + RMSNorm.
#include <vector>

#include "kgate/base/shape.hpp"

namespace kgate::kernels {

// Small shapes for the correctness suite: every vector width (n % 8, 4, 2, odd), rows whose
// vector count is not a multiple of the warp or block size, and rows long enough to need several
// vectors per thread.
std::vector<Shape> norm_test_shapes();
// Llama-3-8B (hidden 4096) and Llama-3-70B (hidden 8192) at decode batches 1..256 and prefill
// token counts 4K and 32K.
std::vector<Shape> norm_bench_shapes();

}  // namespace kgate::kernels
