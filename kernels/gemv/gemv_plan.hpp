#pragma once
// How many 16-row tiles of W one block of gemv/vectorized covers. CUDA-free, for its CPU test.

namespace kgate::kernels {

// At m ≤ 8, one tile per block: short blocks in several waves keep every SM busy to the end. At
// m > 8 (two 8-column tiles of x), every block reads all of x for its tiles from L2, at m 16 as
// many bytes as the W it streams, and its warps share those reads only across its own tiles: so a
// block takes the most tiles, up to 4, that still leave every SM a block.
//
// From sweeps of 1, 2, 4 and 8 tiles per block at m 4-16, cuBLAS's time / this kernel's:
// - m 16, n 28672: 0.79, 0.83, 0.85, 0.91 on an H200; 1.02, 1.00, 1.01, 0.96 on an H100.
// - m 16, n 6144: 0.80, 0.89, 0.72, 0.44 (H200); 1.01, 1.01, 0.90, 0.62 (H100).
// - m 16, n 4096 (256 tiles: two a block leave 4 SMs none): 1.09 and 0.91 at k 4096 and 14336
//   with one tile against 0.94 and 0.83 with two (H200); 1.11 and 1.05 against 1.03 and 0.99 (H100).
// - m ≤ 8: two tiles at most 2.3% ahead of one, and up to 6% behind, on both.
// Eight at n 28672 is 224 blocks, one on some SMs and two on the others: slower on the H100.
constexpr int gemv_tiles_per_block(int m, long long tiles, int sms) {
  if (m <= 8) return 1;
  int per_block = 1;
  while (per_block < 4 && (tiles + 2 * per_block - 1) / (2 * per_block) >= sms) per_block *= 2;
  return per_block;
}

}  // namespace kgate::kernels
