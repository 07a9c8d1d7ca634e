// FlashAttention-2 on the sm_80 tensor cores: mma.sync m16n8k16 (bf16 in, fp32 accumulate).
//
// A block of 4 warps owns 128 query rows of one (batch, head); each warp owns 32 of them (two m16
// tiles), so every K/V fragment a warp loads from shared memory feeds two MMAs — with 16 rows per
// warp, ldmatrix traffic (128 B/clock per SM) rather than the tensor cores would set the pace.
// The warp keeps its 32 rows' output accumulator, softmax statistics and score tile in registers
// for the whole key loop; Q stays in shared memory and is re-read per key tile (keeping it in
// registers as well would not fit in 255).
//
// Per key tile: S = Q·Kᵀ (ldmatrix fragments), mask (only on the diagonal and the ragged last
// tile), online softmax in registers (tensor_core_softmax.cuh), P rounded to bf16 straight into
// A fragments, O += P·V (V read with ldmatrix.trans). K and V tiles are double-buffered with
// cp.async, each in its own commit group, so Q·Kᵀ of tile j starts while V_j and tile j+1 are
// still arriving. Causal blocks stop at the diagonal, and run longest-first.
//
// Shared-memory rows are D bf16 with their 16-byte chunks XOR-swizzled by the row's low 3 bits,
// so the 8 rows an ldmatrix 8x8 matrix reads hit 8 different bank groups. 128-row Q tile plus two
// stages of 64-key K and V tiles: 97 KiB at d128, 49 KiB at d64; two blocks per SM on an H100/H200
// (registers allow no more: 255 per thread at d128 with no spills, ~220 at d64).
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "../common/launch_limits.hpp"
#include "../common/packed.cuh"
#include "kgate/core/cuda_check.hpp"
#include "kgate/core/registry.hpp"
#include "launch_dispatch.hpp"
#include "prefill_attention.hpp"
#include "tensor_core_softmax.cuh"

namespace kgate::kernels {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
constexpr int kRowTiles = 2;  // m16 tiles per warp
constexpr int kWarpRows = 16 * kRowTiles;
constexpr int kBlockQ = kWarps * kWarpRows;  // query rows per block
constexpr int kMaxGridY = 65535;

template <int D>
struct Tiling {
  // Keys per tile: at d128 the score fragment (kRowTiles · kBlockK / 2 floats) and the output
  // fragment (kRowTiles · D / 2) take 192 of the 255 registers; more keys would spill.
  static constexpr int kBlockK = 64;
  static constexpr int kRowBytes = 2 * D;
  static constexpr int kQBytes = kBlockQ * kRowBytes;
  static constexpr int kKvTileBytes = kBlockK * kRowBytes;
  // Q, then two stages of K, then of V, plus the slack for aligning the first tile to 1 KiB.
  static constexpr int kSmemBytes = kQBytes + 2 * 2 * kKvTileBytes + 1024;
};

// Byte offset of 16-byte chunk `chunk` of tile row `row` (rows of D bf16, swizzled as above).
template <int D>
__device__ __forceinline__ std::uint32_t tile_offset(int row, int chunk) {
  return static_cast<std::uint32_t>(row * (2 * D) + ((chunk ^ (row & 7)) << 4));
}

// Copies tiles of a [seq_len, D] matrix into swizzled shared memory with the whole block: each
// thread always takes the same 16-byte chunk column, every kRowStep-th row, so only its first
// row and two offsets stay live across the key loop.
template <int D>
struct TileLoader {
  static constexpr int kChunks = D / 8;
  static constexpr int kRowStep = kThreads / kChunks;
  int row;               // this thread's first row within a tile
  std::uint32_t offset;  // its chunk's byte offset in a tile
  int column;            // its chunk's first element within a matrix row

  __device__ __forceinline__ TileLoader()
      : row(static_cast<int>(threadIdx.x) / kChunks),
        offset(tile_offset<D>(row, static_cast<int>(threadIdx.x) % kChunks)),
        column(8 * (static_cast<int>(threadIdx.x) % kChunks)) {}

  // Rows [first_row, first_row + ROWS) into `tile`. Rows at or past seq_len are zero-filled:
  // finite in every product (a garbage NaN in V would survive multiplication by a zero weight).
  // Their source address is clamped to the last row, valid though nothing is read from it.
  template <int ROWS>
  __device__ __forceinline__ void load(unsigned char* tile, const __nv_bfloat16* matrix, int first_row, int seq_len) const {
    static_assert(ROWS % kRowStep == 0, "whole rounds of the block");
#pragma unroll
    for (int i = 0; i < ROWS / kRowStep; ++i) {
      const int r = first_row + row + i * kRowStep;
      copy_16B_async(tile + offset + i * kRowStep * 2 * D, matrix + static_cast<std::size_t>(min(r, seq_len - 1)) * D + column,
                     r < seq_len);
    }
  }
};

template <int D>
__global__ void __launch_bounds__(kThreads, 2) fa2_mma_kernel(const PrefillAttentionArgs a) {
  using T = Tiling<D>;
  constexpr int kBlockK = T::kBlockK;
  constexpr int kKeyPieces = kBlockK / 8;  // 8-column pieces of a warp's score tile
  constexpr int kDimPieces = D / 8;        // ... and of its output

  extern __shared__ unsigned char smem[];
  // Tiles start on 1 KiB boundaries (the launch asks for the slack), so that bits 4-7 of every
  // tile row's address are the swizzled chunk alone: see the fragment addresses below.
  unsigned char* const q_tiles = smem + ((1024u - (shared_address(smem) & 1023u)) & 1023u);
  unsigned char* const k_tiles = q_tiles + T::kQBytes;
  unsigned char* const v_tiles = k_tiles + 2 * T::kKvTileBytes;
  const std::uint32_t q_tile = shared_address(q_tiles);  // shared-window addresses, for ldmatrix
  const std::uint32_t k_tile0 = shared_address(k_tiles);
  const std::uint32_t v_tile0 = shared_address(v_tiles);

  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int seq_len = a.seq_len;
  const int bh = static_cast<int>(blockIdx.x);  // batch · heads + head
  const int kv_head = (bh / a.heads) * a.kv_heads + (bh % a.heads) / (a.heads / a.kv_heads);
  // Query tiles in decreasing order: under a causal mask the last tiles have the most keys, and
  // starting them first keeps the final wave short.
  const int q0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * kBlockQ;
  const std::size_t head_elements = static_cast<std::size_t>(seq_len) * D;
  const __nv_bfloat16* q = a.q + bh * head_elements;
  const __nv_bfloat16* k = a.k + kv_head * head_elements;
  const __nv_bfloat16* v = a.v + kv_head * head_elements;

  const int key_end = a.causal ? min(seq_len, q0 + kBlockQ) : seq_len;
  const int tiles = (key_end + kBlockK - 1) / kBlockK;
  // Tiles whose keys all lie below this bound are visible to every query of the block: no mask.
  const int unmasked_end = a.causal ? min(seq_len, q0 + 1) : seq_len;

  const TileLoader<D> loader;
  loader.template load<kBlockQ>(q_tiles, q, q0, seq_len);
  loader.template load<kBlockK>(k_tiles, k, 0, seq_len);
  commit_async_copies();  // group: Q and K_0
  loader.template load<kBlockK>(v_tiles, v, 0, seq_len);
  commit_async_copies();  // group: V_0

  const float scale_log2 = a.scale * 1.4426950408889634f;
  const int warp_row = warp * kWarpRows;
  // Each lane's ldmatrix row address at the first k (or d) chunk. A later 16-wide step c moves
  // the chunk from h to 2c + h = 2c ^ h, and swizzled that is 2c ^ h ^ (row & 7): the address of
  // step c is this one XOR 32·c, and further 16-row steps add whole multiples of 16 rows. Both
  // are immediates, so the loops need no per-step address registers.
  //   Q (A operand): lanes 0-15 rows 0-15 at chunk 0, lanes 16-31 the same rows at chunk 1.
  //   K (B operand, two 8-key pieces): rows 0-7 chunk 0, rows 0-7 chunk 1, rows 8-15 chunk 0, rows 8-15 chunk 1.
  //   V (B operand through .trans, two 8-wide d pieces): rows 0-7 chunk 0, rows 8-15 chunk 0, rows 0-7 chunk 1, rows 8-15 chunk 1.
  const std::uint32_t q_lane = q_tile + tile_offset<D>(warp_row + (lane & 15), lane >> 4);
  const std::uint32_t k_lane = tile_offset<D>((lane & 7) + ((lane >> 4) << 3), (lane >> 3) & 1);
  const std::uint32_t v_lane = tile_offset<D>(lane & 15, lane >> 4);
  constexpr int kRow16 = 16 * T::kRowBytes;  // bytes of 16 tile rows
  float o[kRowTiles][kDimPieces][4] = {};
  SoftmaxRows rows[kRowTiles];

  for (int j = 0; j < tiles; ++j) {
    const int stage = j & 1;
    const std::uint32_t k_tile = k_tile0 + stage * T::kKvTileBytes;
    const std::uint32_t v_tile = v_tile0 + stage * T::kKvTileBytes;

    // Pending before: K_j, V_j. This thread's K_j copies have landed ...
    wait_async_copies<1>();
    // ... and everyone's; also every warp is done with tile j - 1, whose stage is refilled next.
    __syncthreads();
    // Always two commits, empty after the last tile, so the wait counts above and below hold.
    if (j + 1 < tiles) loader.template load<kBlockK>(k_tiles + (stage ^ 1) * T::kKvTileBytes, k, (j + 1) * kBlockK, seq_len);
    commit_async_copies();
    if (j + 1 < tiles) loader.template load<kBlockK>(v_tiles + (stage ^ 1) * T::kKvTileBytes, v, (j + 1) * kBlockK, seq_len);
    commit_async_copies();

    // S = Q·Kᵀ, 16 of the head dimension at a time.
    float s[kRowTiles][kKeyPieces][4] = {};
#pragma unroll
    for (int kc = 0; kc < D / 16; ++kc) {
      std::uint32_t qa[kRowTiles][4];
#pragma unroll
      for (int m = 0; m < kRowTiles; ++m) ldmatrix_x4(qa[m], (q_lane ^ (32 * kc)) + m * kRow16);
      const std::uint32_t k_step = (k_tile + k_lane) ^ (32 * kc);
#pragma unroll
      for (int n = 0; n < kBlockK / 16; ++n) {
        std::uint32_t kb[4];
        ldmatrix_x4(kb, k_step + n * kRow16);
#pragma unroll
        for (int m = 0; m < kRowTiles; ++m) {
          mma_bf16_16x8x16(s[m][2 * n], qa[m][0], qa[m][1], qa[m][2], qa[m][3], kb[0], kb[1]);
          mma_bf16_16x8x16(s[m][2 * n + 1], qa[m][0], qa[m][1], qa[m][2], qa[m][3], kb[2], kb[3]);
        }
      }
    }

    const bool needs_mask = (j + 1) * kBlockK > unmasked_end;
    std::uint32_t p[kRowTiles][kKeyPieces / 2][4];
#pragma unroll
    for (int m = 0; m < kRowTiles; ++m) {
      if (needs_mask) mask_scores(s[m], j * kBlockK, q0 + warp_row + 16 * m, seq_len, a.causal);
      float rescale[2];
      softmax_tile(s[m], rows[m], scale_log2, rescale);
      rescale_rows(o[m], rescale);
      probabilities_to_a_fragments(s[m], p[m]);
    }

    // Pending: V_j, K_{j+1}, V_{j+1}. V_j has landed, for everyone.
    wait_async_copies<2>();
    __syncthreads();

    // O += P·V. V is [keys, d] row-major while the B operand wants pairs of keys per register:
    // ldmatrix.trans provides them.
#pragma unroll
    for (int d = 0; d < D / 16; ++d) {
      const std::uint32_t v_step = (v_tile + v_lane) ^ (32 * d);
#pragma unroll
      for (int kk = 0; kk < kBlockK / 16; ++kk) {
        std::uint32_t vb[4];
        ldmatrix_x4_trans(vb, v_step + kk * kRow16);
#pragma unroll
        for (int m = 0; m < kRowTiles; ++m) {
          mma_bf16_16x8x16(o[m][2 * d], p[m][kk][0], p[m][kk][1], p[m][kk][2], p[m][kk][3], vb[0], vb[1]);
          mma_bf16_16x8x16(o[m][2 * d + 1], p[m][kk][0], p[m][kk][1], p[m][kk][2], p[m][kk][3], vb[2], vb[3]);
        }
      }
    }
  }

#pragma unroll
  for (int m = 0; m < kRowTiles; ++m)
    store_rows(o[m], rows[m], a.o + bh * head_elements, a.lse + static_cast<std::size_t>(bh) * seq_len, q0 + warp_row + 16 * m, seq_len);
}

template <int D>
void launch_head_dim(const PrefillAttentionArgs& a, cudaStream_t stream) {
  constexpr int kSmemBytes = Tiling<D>::kSmemBytes;
  allow_dynamic_shared<fa2_mma_kernel<D>, kSmemBytes>();  // once per process, before any capture
  const dim3 grid(static_cast<unsigned>(a.batch * a.heads), static_cast<unsigned>((a.seq_len + kBlockQ - 1) / kBlockQ));
  fa2_mma_kernel<D><<<grid, kThreads, kSmemBytes, stream>>>(a);
  KGATE_CHECK_LAUNCH();
}

void launch(const PrefillAttentionArgs& a, cudaStream_t stream) {
  if ((a.seq_len + kBlockQ - 1) / kBlockQ > kMaxGridY)
    throw UnsupportedShape("seq_len above " + std::to_string(kMaxGridY * kBlockQ) + ": too many query tiles for the grid");
  prefill::dispatch_head_dim(a, "fa2_mma", [&]<int D>() { launch_head_dim<D>(a, stream); });
}

}  // namespace

KGATE_REGISTER_VARIANT(PrefillAttentionFamily, launch,
                       {.name = "fa2_mma",
                        .description = "FlashAttention-2 on mma.sync m16n8k16: 4 warps x 32 query rows, ldmatrix from "
                                       "swizzled shared memory, K/V double-buffered with cp.async, softmax in registers, "
                                       "causal tiles skipped",
                        .min_compute_capability = 80,
                        .follows = "fa2_splitkv"});

}  // namespace kgate::kernels
