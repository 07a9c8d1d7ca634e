// fa3_wgmma's next step on Hopper (sm_90a only), the FlashAttention-3 paper's scheduling:
//
// Ping-pong between consumer warpgroups (paper, section 3.1). Each consumer warpgroup issues its
// matrix products for a tile (S_j = Q·K_jᵀ and O += P_{j-1}·V_{j-1}) only when it holds the
// "turn", a token passed around the consumers with named barriers: it waits on its own barrier
// (bar.sync), issues, and arrives on the next consumer's (bar.arrive). So the consumers' products
// reach the tensor cores in strict alternation, and while one warpgroup runs its softmax (exp2,
// shuffles: no tensor-core work) the tensor cores are busy with the other's products.
//
// Overlap within a warpgroup (section 3.2), kept from fa3_wgmma: S_j and P_{j-1}·V_{j-1} are
// issued back to back, and the softmax of S_j runs while P_{j-1}·V_{j-1} is still in flight.
//
// A persistent grid: one block per SM loops over (batch·head, query tile) work tiles. With three
// consumers (below), work tile t goes to block t mod G in even rounds and G - 1 - (t mod G) in odd
// ones (G blocks), a snake that evens out the work per block. Without the mask every tile has the
// same work, and tiles are numbered head by head so that the blocks working at one time share the
// K and V of few heads in L2. Under the causal mask the tiles are numbered longest first (the last
// query tiles, which see the most keys), so that a block's final rounds hold short ones, but within
// sections of heads whose K and V fit in half the L2 (heads_per_section says how many): numbered
// across all heads at once, the 132 blocks of an H100 each read a different head's K/V, which L2
// cannot hold (b 8 h 16 S 2048: 128 MiB; L2 hit rate 36%, DRAM 82% busy, 0.66x cuDNN's speed on an
// H100; 1.02x in sections). Causal d64 blocks of two consumers at S 1024-2048 claim their tiles in
// that order instead: block b starts with tile b, and its producer claims each later one as it
// starts loading it, from a counter in zeroed scratch (tile_counter, which the last block to finish
// claiming zeroes again), and hands its number to the consumers beside its Q. Under the mask the
// tiles differ in length, and where a block gets only a few of them no static order evens out the
// blocks' loads; a block that finishes early takes the next longest tile instead. Measured with
// kgate ab against the snake (H200, 3 rounds): d64 causal S 1024 1.03x and S 2048 1.07x faster, but
// S 512 0.96x (31 tiles a block, each waiting for its number's L2 read) and six of the eight d128
// causal shapes 0.95-0.99x (the other two the same), so those keep the snake. Claiming a tile ahead
// (its number read at the end of the tile before) lost the d64 gains (0.96-0.98x) and still left
// d128 0.98x. The producer runs ahead across work tiles: the K/V ring's position carries over, and
// Q has two buffers, so the next tile's Q arrives while the consumers still work on the current
// one; with one buffer its latency fell between every two work tiles, which shows where a work tile
// is only a few key tiles (S 512 d64: 0.91x -> 0.95x cuDNN's speed).
//
// Tile shapes, per head dimension (Tiling below): d128 as fa3_wgmma, two consumers of 64 query
// rows (128 per block) and 128-key tiles in a two-stage ring: 2 x Q 32 KiB + 2 x (K 32 + V 32) KiB;
// the consumers need ~200 registers for S, P and O. d64 has half the operand bytes and half the O
// registers per row, so a block takes three consumers (192 query rows) on the same 128-key tiles,
// which reads each K/V tile for 1.5 times as many rows, and a three-stage ring: 2 x Q 24 KiB +
// 3 x (K 16 + V 16) KiB; 160 registers per consumer thread hold its S, P and O. Short causal
// sequences at d64 go back to two consumers (TilingD64Causal).
//
// Everything else (TMA slabs in the 128-byte swizzle, wgmma operands, softmax) is fa3_wgmma's:
// sm90_tiles.cuh and tensor_core_softmax.cuh.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../common/launch_limits.hpp"
#include "kgate/core/cuda_check.hpp"
#include "kgate/core/registry.hpp"
#include "kgate/results/device.hpp"
#include "launch_dispatch.hpp"
#include "prefill_attention.hpp"
#include "sm90_tiles.cuh"
#include "tensor_core_softmax.cuh"

namespace kgate::kernels {
namespace {

constexpr int kBlockK = 128;  // keys per tile (the n of the S product, the k of P·V)

// A block's shape: head dimension, consumer warpgroups (64 query rows each) and K/V ring stages,
// and whether its blocks claim their work tiles (see the file's comment).
// The producer warpgroup gives its registers to the consumers: 128 x (24 + consumers x R) of the
// 65536 (d128 with two consumers: R = 240; three: 160).
template <int HEAD_DIM, int CONSUMERS, int STAGES, bool CLAIMS = false>
struct Tiling {
  static constexpr int kHeadDim = HEAD_DIM;
  static constexpr int kConsumers = CONSUMERS;
  static constexpr int kStages = STAGES;
  static constexpr int kProducerRegisters = 24;
  static constexpr int kConsumerRegisters = (65536 / 128 - kProducerRegisters) / CONSUMERS / 8 * 8;
  static constexpr bool kClaimsTiles = CLAIMS;
  static_assert(128 * (kProducerRegisters + CONSUMERS * kConsumerRegisters) <= 65536, "an SM's registers");
};
using TilingD128 = Tiling<128, 2, 2>;
using TilingD64 = Tiling<64, 3, 3>;
// Short causal sequences at d64 take two consumers (128 query rows): with 192, the diagonal tiles
// waste more of their products on masked keys and the few tiles per head differ more in length.
// Measured on an H100 against cuDNN, three consumers -> two: S 512 0.67x -> 0.86x, S 1024 0.68x ->
// 0.86x, S 2048 0.76x -> 0.88x; at S 4096 three were better (0.97x against 0.94x). Above S 512
// their blocks claim their work tiles (see the file's comment).
using TilingD64Causal = Tiling<64, 2, 3>;
using TilingD64CausalClaims = Tiling<64, 2, 3, true>;
constexpr int kShortCausalD64 = 2048;
constexpr int kClaimingCausalD64 = 512;  // claims above this length

template <class T>
struct SharedLayout {
  static constexpr int D = T::kHeadDim;
  static constexpr int kThreads = 128 * (1 + T::kConsumers);
  static constexpr int kBlockQ = 64 * T::kConsumers;  // query rows per work tile
  static constexpr int kSlabs = D / kSlabWidth;
  static constexpr int kQSlabBytes = kBlockQ * kSlabRowBytes;
  static constexpr int kKvSlabBytes = kBlockK * kSlabRowBytes;
  static constexpr int kQBytes = kSlabs * kQSlabBytes;
  static constexpr int kKvTileBytes = kSlabs * kKvSlabBytes;
  static constexpr int kQBuffers = 2;                        // Q of the current and the next work tile
  static constexpr int kK = kQBuffers * kQBytes;             // K ring
  static constexpr int kV = kK + T::kStages * kKvTileBytes;  // V ring
  // Per Q buffer q_full, q_empty; then per stage k_full, k_empty, v_full, v_empty.
  static constexpr int kBarriers = kV + T::kStages * kKvTileBytes;
  static constexpr int kBarrierCount = 2 * kQBuffers + 4 * T::kStages;
  // The swizzle pattern repeats every 1 KiB: tiles must start on such a boundary, so the launch
  // asks for 1 KiB of slack to align the dynamic shared memory.
  static constexpr int kBytes = kBarriers + 8 * kBarrierCount + 1024;
  static_assert(kQSlabBytes % 1024 == 0 && kKvSlabBytes % 1024 == 0, "slabs start on 1 KiB swizzle atoms");
};

// The persistent grid's work: `heads_total` (batch·heads) x `query_tiles` work tiles, numbered
// head by head without the causal mask, and under it longest first within sections of
// `heads_per_section` heads (see the file's comment).
struct TileSchedule {
  int heads_total;
  int query_tiles;
  bool causal;
  int heads_per_section;

  __host__ __device__ int tiles() const { return heads_total * query_tiles; }
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  // The work tile a block takes in its round `round` (its n-th work tile), or tiles() and past
  // when it has none left: the snake order over the grid (blocks that claim tiles use locate only).
  __device__ int tile_of(int round) const {
    const int blocks = static_cast<int>(gridDim.x), block = static_cast<int>(blockIdx.x);
    return round * blocks + ((round & 1) ? blocks - 1 - block : block);
  }
  __device__ void locate(int tile, int& bh, int& query_tile) const {
    if (causal) {
      const int section = tile / (heads_per_section * query_tiles);
      const int first_head = section * heads_per_section;
      const int heads = min(heads_per_section, heads_total - first_head);  // the last section may be short
      const int index = tile - first_head * query_tiles;
      bh = first_head + index % heads;
      query_tile = query_tiles - 1 - index / heads;
    } else {
      bh = tile / query_tiles;
      query_tile = tile % query_tiles;
    }
  }
#endif  // sm_90a device code
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Named barrier ids (0 is __syncthreads): the turn, one per consumer; then one per consumer for
// its own four warps in the epilogue.
constexpr int kFirstTurnBarrier = 1;
constexpr int kFirstEpilogueBarrier = kFirstTurnBarrier + 3;

// The turn: a named barrier per consumer of the two consumer warpgroups taking part (the one
// waiting and the one passing it), 256 threads.
__device__ __forceinline__ void wait_for_turn(int consumer) {
  asm volatile("bar.sync %0, 256;\n" ::"r"(kFirstTurnBarrier + consumer) : "memory");
}
__device__ __forceinline__ void pass_turn(int to_consumer) {
  asm volatile("bar.arrive %0, 256;\n" ::"r"(kFirstTurnBarrier + to_consumer) : "memory");
}
// The four warps of one consumer warpgroup, 128 threads.
__device__ __forceinline__ void sync_consumer(int consumer) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(kFirstEpilogueBarrier + consumer) : "memory");
}

// A consumer's 64 rows of O (the wgmma accumulator layout: warp w holds rows 16w..16w+15, lane l
// rows l/4 and l/4 + 8 at columns 8i + 2(l mod 4) and one on), normalized, rounded to bf16 and
// written to shared memory at `tile` in the layout TMA reads: 64-column slabs of 128-byte rows,
// the 16-byte chunk c of row r at chunk c xor (r mod 8) (the 128-byte swizzle).
template <int NT>
__device__ __forceinline__ void stage_rows_swizzled(const float (&acc)[NT][4], const float (&inverse)[2], std::uint32_t tile,
                                                    int slab_bytes) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp_row = 16 * ((static_cast<int>(threadIdx.x) / 32) % 4);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int row = warp_row + (lane >> 2) + 8 * r;
#pragma unroll
    for (int i = 0; i < NT; ++i) {
      const int column = 8 * i + 2 * (lane & 3);
      const int byte = (column % kSlabWidth) * 2;
      const std::uint32_t address =
          tile + (column / kSlabWidth) * slab_bytes + row * kSlabRowBytes + ((((byte >> 4) ^ (row & 7)) << 4) | (byte & 15));
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(address), "r"(pack_bf16x2(acc[i][2 * r] * inverse[r], acc[i][2 * r + 1] * inverse[r]))
                   : "memory");
    }
  }
}

#endif  // sm_90a device code

template <class T>
__global__ void __launch_bounds__(SharedLayout<T>::kThreads, 1)
    fa3_pingpong_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                        const __grid_constant__ CUtensorMap v_map, const __grid_constant__ CUtensorMap o_map, const PrefillAttentionArgs a,
                        const TileSchedule schedule) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using L = SharedLayout<T>;
  constexpr int D = T::kHeadDim;
  constexpr int kStages = T::kStages;
  constexpr int kBlockQ = L::kBlockQ;
  extern __shared__ unsigned char smem[];
  const std::uint32_t base = (shared_address(smem) + 1023u) & ~1023u;
  const std::uint32_t barriers = base + L::kBarriers;
  const auto q_full = [&](int buffer) { return barriers + 8 * buffer; };
  const auto q_empty = [&](int buffer) { return barriers + 8 * (L::kQBuffers + buffer); };
  const std::uint32_t ring_barriers = barriers + 8 * 2 * L::kQBuffers;
  const auto k_full = [&](int stage) { return ring_barriers + 8 * (4 * stage); };
  const auto k_empty = [&](int stage) { return ring_barriers + 8 * (1 + 4 * stage); };
  const auto v_full = [&](int stage) { return ring_barriers + 8 * (2 + 4 * stage); };
  const auto v_empty = [&](int stage) { return ring_barriers + 8 * (3 + 4 * stage); };
  const auto q_tile = [&](int buffer) { return base + buffer * L::kQBytes; };
  // Where a claiming block's producer puts the number of the work tile in Q buffer `buffer`.
  const auto tile_slot = [](int buffer) { return static_cast<int>(blockIdx.x) * L::kQBuffers + buffer; };
  // Work tile `round` uses Q buffer round mod 2, whose barriers complete phase round / 2.
  const auto q_buffer_of = [](int round) { return round % L::kQBuffers; };
  const auto q_phase_of = [](int round) { return static_cast<std::uint32_t>(round / L::kQBuffers) & 1; };
  const auto k_tile = [&](int stage) { return base + L::kK + stage * L::kKvTileBytes; };
  const auto v_tile = [&](int stage) { return base + L::kV + stage * L::kKvTileBytes; };
  // K/V tiles pass through the ring in one sequence over all of a block's work tiles: the n-th
  // lies in stage n mod kStages, and its barriers complete phase n / kStages.
  const auto stage_of = [](int n) { return n % kStages; };
  const auto phase_of = [](int n) { return static_cast<std::uint32_t>(n / kStages) & 1; };

  const int seq_len = a.seq_len;
  // Keys work tile (bh, query_tile) attends to, in 128-key tiles.
  const auto key_tiles = [&](int query_tile) {
    const int key_end = a.causal ? min(seq_len, (query_tile + 1) * kBlockQ) : seq_len;
    return (key_end + kBlockK - 1) / kBlockK;
  };
  const auto kv_head_of = [&](int bh) { return (bh / a.heads) * a.kv_heads + (bh % a.heads) / (a.heads / a.kv_heads); };

  if (threadIdx.x == 0) {
    for (int buffer = 0; buffer < L::kQBuffers; ++buffer) {
      mbarrier_init(q_full(buffer), 1);                   // the producer's arrive; the bytes complete it
      mbarrier_init(q_empty(buffer), 4 * T::kConsumers);  // one arrive per consumer warp
    }
    for (int stage = 0; stage < kStages; ++stage) {
      mbarrier_init(k_full(stage), 1);
      mbarrier_init(v_full(stage), 1);
      mbarrier_init(k_empty(stage), 4 * T::kConsumers);
      mbarrier_init(v_empty(stage), 4 * T::kConsumers);
    }
    fence_barrier_init();  // visible to the copy engine
  }
  __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(T::kProducerRegisters) : "memory");
    if (threadIdx.x == 0) {
      int loaded = 0;  // K/V tiles issued so far
      for (int round = 0;; ++round) {
        int tile;
        if constexpr (T::kClaimsTiles) {
          // The number goes beside the tile's Q, so the tile is claimed once that buffer is free
          // (its number was last read two work tiles ago). Past the end, the number alone tells the
          // consumers to stop.
          const int q_buffer = q_buffer_of(round);
          mbarrier_wait(q_empty(q_buffer), q_phase_of(round) ^ 1);
          tile = round == 0 ? static_cast<int>(blockIdx.x) : static_cast<int>(gridDim.x) + atomicAdd(&a.tile_counter[0], 1);
          const bool past_end = tile >= schedule.tiles();
          // The number goes into the block's slot in global memory before the arrive on Q's barrier
          // (a release), which the consumers' wait acquires. In shared memory racecheck reported the
          // slot's reuse two tiles later as a race, whether the number came by a plain store or by a
          // bulk copy (it does not follow the order through the mbarriers), and st.async into the
          // block's own shared memory stopped the kernel with an illegal instruction (H200).
          a.tile_slots[tile_slot(q_buffer)] = tile;
          mbarrier_arrive_expect_bytes(q_full(q_buffer), past_end ? 0 : L::kQBytes);
          if (past_end) break;
        } else {
          tile = schedule.tile_of(round);
          if (tile >= schedule.tiles()) break;
        }
        int bh, query_tile;
        schedule.locate(tile, bh, query_tile);
        const int q0 = query_tile * kBlockQ, kv_head = kv_head_of(bh), tiles = key_tiles(query_tile);
        // Q first: its buffer was last read two work tiles ago.
        const int q_buffer = q_buffer_of(round);
        if constexpr (!T::kClaimsTiles) {
          mbarrier_wait(q_empty(q_buffer), q_phase_of(round) ^ 1);
          mbarrier_arrive_expect_bytes(q_full(q_buffer), L::kQBytes);
        }
        for (int slab = 0; slab < L::kSlabs; ++slab)
          tma_load_box(q_tile(q_buffer) + slab * L::kQSlabBytes, q_map, slab * kSlabWidth, q0, bh, q_full(q_buffer));
        for (int j = 0; j < tiles; ++j, ++loaded) {
          const int stage = stage_of(loaded);
          const std::uint32_t free_parity = phase_of(loaded) ^ 1;  // a fresh barrier's "previous" phase counts as done
          load_ring_tile<L::kSlabs, L::kKvSlabBytes>(k_tile(stage), k_full(stage), k_empty(stage), free_parity, k_map, j * kBlockK,
                                                     kv_head);
          load_ring_tile<L::kSlabs, L::kKvSlabBytes>(v_tile(stage), v_full(stage), v_empty(stage), free_parity, v_map, j * kBlockK,
                                                     kv_head);
        }
      }
      if constexpr (T::kClaimsTiles) {
        // Every block claims once past the end before it counts itself here, so the last to count
        // comes after every claim of this launch and zeroes the counter for the next.
        __threadfence();  // release: this block's claims before its count
        if (atomicAdd(&a.tile_counter[1], 1) == static_cast<int>(gridDim.x) - 1) {
          __threadfence();  // acquire: the other blocks' claims before the zeroing
          a.tile_counter[0] = 0;
          a.tile_counter[1] = 0;
        }
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(T::kConsumerRegisters) : "memory");
    const int consumer = warpgroup - 1;
    const int next_consumer = consumer + 1 == T::kConsumers ? 0 : consumer + 1;
    const bool lane0 = (threadIdx.x & 31) == 0;
    const int warp_row = 64 * consumer + 16 * ((static_cast<int>(threadIdx.x) / 32) % 4);  // this warp's 16 rows in the tile
    const float scale_log2 = a.scale * 1.4426950408889634f;
    const auto k_desc = [&](int stage) { return smem_descriptor(k_tile(stage), 16); };
    const auto v_desc = [&](int stage) { return smem_descriptor(v_tile(stage), L::kKvSlabBytes); };
    const auto release = [&](std::uint32_t barrier) {
      if (lane0) mbarrier_arrive(barrier);
    };
    // Consumer 0 takes the first turn: it passes the turn to itself once, and takes it back once
    // after its last work tile, where the last consumer's final pass lands (every arrival on a
    // named barrier is matched by a wait, so none is left pending when the block exits).
    if (consumer == 0) pass_turn(0);

    float s[kBlockK / 8][4];
    float o[D / 8][4];
    std::uint32_t p[kBlockK / 16][4];
    int consumed = 0;  // K/V tiles of earlier work tiles
    for (int round = 0;; ++round) {
      int tile;
      if constexpr (T::kClaimsTiles) {
        // The producer's number for this round arrives with its Q, or alone past the end.
        mbarrier_wait(q_full(q_buffer_of(round)), q_phase_of(round));
        tile = __ldcg(&a.tile_slots[tile_slot(q_buffer_of(round))]);  // from L2: the slot was rewritten since its last read
      } else {
        tile = schedule.tile_of(round);
      }
      if (tile >= schedule.tiles()) break;
      int bh, query_tile;
      schedule.locate(tile, bh, query_tile);
      const int q0 = query_tile * kBlockQ, tiles = key_tiles(query_tile);
      const int first_row = q0 + warp_row;
      // Key tiles [0, unmasked_tiles) are visible to every query row of the work tile; the rest
      // (the diagonal, the ragged end) are masked. Two loops rather than a branch: control flow
      // inside the overlapped region makes ptxas wait for the P·V product before the softmax.
      const int unmasked_end = a.causal ? min(seq_len, q0 + 1) : seq_len;
      const int unmasked_tiles = min(tiles, unmasked_end / kBlockK);
#pragma unroll
      for (int i = 0; i < D / 8; ++i)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[i][e] = 0.0f;
      SoftmaxRows rows;
      float rescale[2];  // nothing accumulated yet: tile 0 needs no rescale

      const int q_buffer = q_buffer_of(round);
      const std::uint64_t q_desc = smem_descriptor(q_tile(q_buffer) + consumer * 64 * kSlabRowBytes, 16);
      if constexpr (!T::kClaimsTiles) mbarrier_wait(q_full(q_buffer), q_phase_of(round));  // claiming blocks waited above
      mbarrier_wait(k_full(stage_of(consumed)), phase_of(consumed));
      wait_for_turn(consumer);
      wgmma_fence();
      issue_scores<D, L::kQSlabBytes, L::kKvSlabBytes>(s, q_desc, k_desc(stage_of(consumed)));
      wgmma_commit();
      pass_turn(next_consumer);
      wgmma_wait<0>();
      pin_registers(s);
      release(k_empty(stage_of(consumed)));
      if (unmasked_tiles == 0) mask_scores(s, 0, first_row, seq_len, a.causal);
      softmax_tile(s, rows, scale_log2, rescale);
      mbarrier_wait(v_full(stage_of(consumed)), phase_of(consumed));
      probabilities_to_a_fragments(s, p);

      // Step j: in this consumer's turn, S_j = Q·K_jᵀ and O += P_{j-1}·V_{j-1} go to the tensor
      // cores back to back; the softmax of S_j runs while the second (and the other consumers'
      // products) are still in flight.
      const auto step = [&](int j, auto masked) {
        const int current = consumed + j, previous = consumed + j - 1;
        mbarrier_wait(k_full(stage_of(current)), phase_of(current));
        pin_registers(o);
        pin_registers(p);
        wait_for_turn(consumer);
        wgmma_fence();  // orders this thread's writes of p and o before the products below read them
        issue_scores<D, L::kQSlabBytes, L::kKvSlabBytes>(s, q_desc, k_desc(stage_of(current)));
        wgmma_commit();
        issue_output<D>(o, p, v_desc(stage_of(previous)));  // V_{j-1} was waited for in the previous step
        wgmma_commit();
        pass_turn(next_consumer);
        wgmma_wait<1>();  // S_j is done
        pin_registers(s);
        release(k_empty(stage_of(current)));
        if constexpr (decltype(masked)::value) mask_scores(s, j * kBlockK, first_row, seq_len, a.causal);
        softmax_tile(s, rows, scale_log2, rescale);
        // V_j is needed by the next step anyway; waiting for it here also keeps the softmax above
        // the wait for P·V: ptxas hoists that wait to the top of its basic block, and the barrier's
        // retry branch starts a new one.
        mbarrier_wait(v_full(stage_of(current)), phase_of(current));
        wgmma_wait<0>();
        pin_registers(o);
        pin_registers(p);
        release(v_empty(stage_of(previous)));
        rescale_rows(o, rescale);
        probabilities_to_a_fragments(s, p);
      };
      int j = 1;
      for (; j < unmasked_tiles; ++j) step(j, std::false_type{});
      for (; j < tiles; ++j) step(j, std::true_type{});

      const int last = consumed + tiles - 1;
      pin_registers(o);
      pin_registers(p);
      wait_for_turn(consumer);
      wgmma_fence();
      issue_output<D>(o, p, v_desc(stage_of(last)));
      wgmma_commit();
      pass_turn(next_consumer);
      wgmma_wait<0>();
      pin_registers(o);
      release(v_empty(stage_of(last)));
      consumed += tiles;
      float inverse[2];
      finish_rows(rows, a.lse + static_cast<std::size_t>(bh) * seq_len, first_row, seq_len, inverse);
      // O leaves through shared memory and TMA, whole 128-byte rows: stored from the accumulator
      // fragments, each thread's 4-byte pieces filled half of every 32-byte sector they touched
      // (ncu on an H100, S 512: 2.1M excess sectors, half of the kernel's). It is staged in this
      // consumer's rows of the Q buffer, which only its own products read and which are done.
      const std::uint32_t staging = q_tile(q_buffer) + consumer * 64 * kSlabRowBytes;
      stage_rows_swizzled<D / 8>(o, inverse, staging, L::kQSlabBytes);
      fence_shared_for_tma();
      sync_consumer(consumer);
      const bool storer = threadIdx.x % 128 == 0;
      if (storer) {
        for (int slab = 0; slab < L::kSlabs; ++slab)
          tma_store_box(o_map, staging + slab * L::kQSlabBytes, slab * kSlabWidth, q0 + 64 * consumer, bh);
        tma_store_commit();
        tma_store_wait_read();
      }
      sync_consumer(consumer);
      release(q_empty(q_buffer));  // every product that reads this Q and the store of O are done with it
    }
    if (threadIdx.x % 128 == 0) tma_store_wait();
    if (consumer == 0) wait_for_turn(0);
  }
#else
  (void)q_map, (void)k_map, (void)v_map, (void)o_map, (void)a, (void)schedule;
#endif
}

// Heads per causal section: as many as have their K and V in half the L2 (a GQA group's query
// heads share theirs), and at least a quarter of the grid's blocks' worth, so that one round of
// the grid spans at most about four query tiles of a head: the tiles of a round then differ
// little in length, and the static snake keeps the blocks' loads even. Measured on an H100
// against cuDNN: with the L2 rule alone, d128 S 4096 causal was 0.94x and d64 S 16384 causal
// 0.83x; with at least a quarter, 1.03x and 1.09x; with at least half, d128 S 2048 and S 4096
// causal fell to 0.85x and 0.90x (sections of 66 heads' K/V, 66 MiB, overflow L2).
int heads_per_section(const PrefillAttentionArgs& a, int head_dim, const DeviceInfo& device) {
  const std::size_t kv_bytes_per_head = 2 * sizeof(__nv_bfloat16) * static_cast<std::size_t>(a.seq_len) * head_dim * a.kv_heads / a.heads;
  const std::size_t fit_in_l2 = device.l2_bytes / 2 / std::max<std::size_t>(kv_bytes_per_head, 1);
  const std::size_t heads = std::max<std::size_t>(fit_in_l2, device.sm_count / 4);
  return static_cast<int>(std::clamp<std::size_t>(heads, 1, static_cast<std::size_t>(a.batch) * a.heads));
}

template <class T>
void launch_tiling(const PrefillAttentionArgs& a, const DeviceInfo& device, cudaStream_t stream) {
  using L = SharedLayout<T>;
  constexpr int D = T::kHeadDim;
  allow_dynamic_shared<fa3_pingpong_kernel<T>, L::kBytes>();  // once per process, before any capture
  const TileSchedule schedule{.heads_total = a.batch * a.heads,
                              .query_tiles = (a.seq_len + L::kBlockQ - 1) / L::kBlockQ,
                              .causal = a.causal,
                              .heads_per_section = heads_per_section(a, D, device)};
  const CUtensorMap q_map = slab_boxes_map(a.q, a.batch * a.heads, a.seq_len, D, L::kBlockQ, "fa3_pingpong");
  const CUtensorMap k_map = slab_boxes_map(a.k, a.batch * a.kv_heads, a.seq_len, D, kBlockK, "fa3_pingpong");
  const CUtensorMap v_map = slab_boxes_map(a.v, a.batch * a.kv_heads, a.seq_len, D, kBlockK, "fa3_pingpong");
  const CUtensorMap o_map = slab_boxes_map(a.o, a.batch * a.heads, a.seq_len, D, 64, "fa3_pingpong");  // a consumer's rows
  const int blocks = std::min(schedule.tiles(), device.sm_count);  // one block per SM holds all its shared memory
  if (T::kClaimsTiles && blocks > kMaxClaimingBlocks)
    throw UnsupportedShape("fa3_pingpong claims work tiles for at most " + std::to_string(kMaxClaimingBlocks) + " blocks (SMs)");
  fa3_pingpong_kernel<T><<<blocks, L::kThreads, L::kBytes, stream>>>(q_map, k_map, v_map, o_map, a, schedule);
  KGATE_CHECK_LAUNCH();
}

void launch(const PrefillAttentionArgs& a, cudaStream_t stream) {
  const DeviceInfo& device = require_hopper("fa3_pingpong");
  if (static_cast<std::int64_t>(a.batch) * a.heads * a.seq_len > (std::int64_t{1} << 31) - 1)
    throw UnsupportedShape("fa3_pingpong numbers its work tiles and rows in 32 bits");
  prefill::dispatch_head_dim(a, "fa3_pingpong", [&]<int D>() {
    if constexpr (D == 128) launch_tiling<TilingD128>(a, device, stream);
    else if (a.causal && a.seq_len <= kClaimingCausalD64) launch_tiling<TilingD64Causal>(a, device, stream);
    else if (a.causal && a.seq_len <= kShortCausalD64) launch_tiling<TilingD64CausalClaims>(a, device, stream);
    else launch_tiling<TilingD64>(a, device, stream);
  });
}

}  // namespace

KGATE_REGISTER_VARIANT(PrefillAttentionFamily, launch,
                       {.name = "fa3_pingpong",
                        .description = "fa3_wgmma plus FlashAttention-3 scheduling (sm_90a): consumer warpgroups "
                                       "take turns at the tensor cores (named-barrier ping-pong) so one's softmax "
                                       "overlaps another's products, a persistent grid (causal tiles longest "
                                       "first in L2-sized sections of heads, claimed from a counter at d64 S "
                                       "1024-2048; otherwise a static snake), two Q buffers, d64 with three consumers (192 query rows; two "
                                       "for causal sequences up to 2048)",
                        .min_compute_capability = 90,
                        .follows = "fa3_wgmma"});

}  // namespace kgate::kernels
