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
// A persistent grid: one block per SM loops over (batch·head, query tile) work tiles. Work tile
// t goes to block t mod G in even rounds and G - 1 - (t mod G) in odd ones (G blocks), a snake
// that evens out the work per block; under the causal mask the tiles are numbered longest first
// (the last query tiles, which see the most keys), so the final round holds the shortest ones.
// Without the mask every tile has the same work, and tiles are numbered head by head so that the
// blocks working at one time share the K and V of few heads in L2. The producer runs ahead across
// work tiles: the K/V ring's position carries over, and the next tile's Q is loaded as soon as the
// consumers have finished their products on the current one (q_empty), during their epilogue.
//
// Tile shapes, per head dimension (Tiling below): d128 as fa3_wgmma, two consumers of 64 query
// rows (128 per block) and 128-key tiles in a two-stage ring: Q 32 KiB + 2 x (K 32 + V 32) KiB;
// the consumers need ~200 registers for S, P and O. d64 has half the operand bytes and half the O
// registers per row, so a block takes three consumers (192 query rows) on the same 128-key tiles,
// which reads each K/V tile for 1.5 times as many rows, and a three-stage ring: Q 24 KiB +
// 3 x (K 16 + V 16) KiB; 160 registers per consumer thread hold its S, P and O.
//
// Everything else (TMA slabs in the 128-byte swizzle, wgmma operands, softmax) is fa3_wgmma's:
// sm90_tiles.cuh and tensor_core_softmax.cuh.
#include <cuda_bf16.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "kgate/core/cuda_check.hpp"
#include "kgate/core/registry.hpp"
#include "kgate/results/device.hpp"
#include "launch_dispatch.hpp"
#include "prefill_attention.hpp"
#include "sm90_tiles.cuh"
#include "tensor_core_softmax.cuh"

namespace kgate::kernels {
namespace {

constexpr int kBlockK = 128;         // keys per tile (the n of the S product, the k of P·V)
constexpr int kFirstTurnBarrier = 1;  // named barrier ids of the turn, one per consumer (0 is __syncthreads)

template <int D>
struct Tiling;
template <>
struct Tiling<128> {
  static constexpr int kConsumers = 2;
  static constexpr int kStages = 2;
  static constexpr int kProducerRegisters = 24;
  static constexpr int kConsumerRegisters = 240;  // 128 x (24 + 2 x 240) = 64512 of 65536
};
template <>
struct Tiling<64> {
  static constexpr int kConsumers = 3;
  static constexpr int kStages = 3;
  static constexpr int kProducerRegisters = 24;
  static constexpr int kConsumerRegisters = 160;  // 128 x (24 + 3 x 160) = 64512 of 65536
};

template <int D>
struct SharedLayout {
  using T = Tiling<D>;
  static constexpr int kThreads = 128 * (1 + T::kConsumers);
  static constexpr int kBlockQ = 64 * T::kConsumers;  // query rows per work tile
  static constexpr int kSlabs = D / kSlabWidth;
  static constexpr int kQSlabBytes = kBlockQ * kSlabRowBytes;
  static constexpr int kKvSlabBytes = kBlockK * kSlabRowBytes;
  static constexpr int kQBytes = kSlabs * kQSlabBytes;
  static constexpr int kKvTileBytes = kSlabs * kKvSlabBytes;
  static constexpr int kK = kQBytes;                                // K ring
  static constexpr int kV = kK + T::kStages * kKvTileBytes;         // V ring
  static constexpr int kBarriers = kV + T::kStages * kKvTileBytes;  // q_full, q_empty, then per stage k_full, k_empty, v_full, v_empty
  static constexpr int kBarrierCount = 2 + 4 * T::kStages;
  // The swizzle pattern repeats every 1 KiB: tiles must start on such a boundary, so the launch
  // asks for 1 KiB of slack to align the dynamic shared memory.
  static constexpr int kBytes = kBarriers + 8 * kBarrierCount + 1024;
  static_assert(kQSlabBytes % 1024 == 0 && kKvSlabBytes % 1024 == 0, "slabs start on 1 KiB swizzle atoms");
};

// The persistent grid's work: `heads_total` (batch·heads) x `query_tiles` work tiles, numbered
// longest first under the causal mask and head by head without it (see the file's comment).
struct TileSchedule {
  int heads_total;
  int query_tiles;
  bool causal;

  __host__ __device__ int tiles() const { return heads_total * query_tiles; }
  // The work tile a block takes in its round `round` (its n-th work tile), or tiles() and past
  // when it has none left: the snake order over the grid.
  __device__ int tile_of(int round) const {
    const int blocks = static_cast<int>(gridDim.x), block = static_cast<int>(blockIdx.x);
    return round * blocks + ((round & 1) ? blocks - 1 - block : block);
  }
  __device__ void locate(int tile, int& bh, int& query_tile) const {
    if (causal) {
      bh = tile % heads_total;
      query_tile = query_tiles - 1 - tile / heads_total;
    } else {
      bh = tile / query_tiles;
      query_tile = tile % query_tiles;
    }
  }
};

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The turn: a named barrier per consumer of the two consumer warpgroups taking part (the one
// waiting and the one passing it), 256 threads.
__device__ __forceinline__ void wait_for_turn(int consumer) {
  asm volatile("bar.sync %0, 256;\n" ::"r"(kFirstTurnBarrier + consumer) : "memory");
}
__device__ __forceinline__ void pass_turn(int to_consumer) {
  asm volatile("bar.arrive %0, 256;\n" ::"r"(kFirstTurnBarrier + to_consumer) : "memory");
}

#endif  // sm_90a device code

template <int D>
__global__ void __launch_bounds__(SharedLayout<D>::kThreads, 1)
    fa3_pingpong_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                        const __grid_constant__ CUtensorMap v_map, const PrefillAttentionArgs a,
                        const TileSchedule schedule) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using T = Tiling<D>;
  using L = SharedLayout<D>;
  constexpr int kStages = T::kStages;
  constexpr int kBlockQ = L::kBlockQ;
  extern __shared__ unsigned char smem[];
  const std::uint32_t base = (shared_address(smem) + 1023u) & ~1023u;
  const std::uint32_t q_full = base + L::kBarriers;
  const std::uint32_t q_empty = q_full + 8;
  const auto k_full = [&](int stage) { return q_full + 8 * (2 + 4 * stage); };
  const auto k_empty = [&](int stage) { return q_full + 8 * (3 + 4 * stage); };
  const auto v_full = [&](int stage) { return q_full + 8 * (4 + 4 * stage); };
  const auto v_empty = [&](int stage) { return q_full + 8 * (5 + 4 * stage); };
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
    mbarrier_init(q_full, 1);                     // the producer's arrive; the bytes complete it
    mbarrier_init(q_empty, 4 * T::kConsumers);    // one arrive per consumer warp
    for (int stage = 0; stage < kStages; ++stage) {
      mbarrier_init(k_full(stage), 1);
      mbarrier_init(v_full(stage), 1);
      mbarrier_init(k_empty(stage), 4 * T::kConsumers);
      mbarrier_init(v_empty(stage), 4 * T::kConsumers);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the copy engine
  }
  __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(T::kProducerRegisters) : "memory");
    if (threadIdx.x == 0) {
      int loaded = 0;  // K/V tiles issued so far
      for (int round = 0;; ++round) {
        const int tile = schedule.tile_of(round);
        if (tile >= schedule.tiles()) break;
        int bh, query_tile;
        schedule.locate(tile, bh, query_tile);
        const int q0 = query_tile * kBlockQ, kv_head = kv_head_of(bh), tiles = key_tiles(query_tile);
        for (int j = 0; j < tiles; ++j, ++loaded) {
          const int stage = stage_of(loaded);
          const std::uint32_t free_parity = phase_of(loaded) ^ 1;  // a fresh barrier's "previous" phase counts as done
          mbarrier_wait(k_empty(stage), free_parity);
          mbarrier_arrive_expect_bytes(k_full(stage), L::kKvTileBytes);
          for (int slab = 0; slab < L::kSlabs; ++slab)
            tma_load_box(k_tile(stage) + slab * L::kKvSlabBytes, k_map, slab * kSlabWidth, j * kBlockK, kv_head,
                         k_full(stage));
          if (j == 0) {
            // Q after the first K tile: the consumers may still be reading the previous Q.
            mbarrier_wait(q_empty, (static_cast<std::uint32_t>(round) & 1) ^ 1);
            mbarrier_arrive_expect_bytes(q_full, L::kQBytes);
            for (int slab = 0; slab < L::kSlabs; ++slab)
              tma_load_box(base + slab * L::kQSlabBytes, q_map, slab * kSlabWidth, q0, bh, q_full);
          }
          mbarrier_wait(v_empty(stage), free_parity);
          mbarrier_arrive_expect_bytes(v_full(stage), L::kKvTileBytes);
          for (int slab = 0; slab < L::kSlabs; ++slab)
            tma_load_box(v_tile(stage) + slab * L::kKvSlabBytes, v_map, slab * kSlabWidth, j * kBlockK, kv_head,
                         v_full(stage));
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
    const std::uint64_t q_desc = smem_descriptor(base + consumer * 64 * kSlabRowBytes, 16);
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
      const int tile = schedule.tile_of(round);
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

      mbarrier_wait(q_full, static_cast<std::uint32_t>(round) & 1);
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
      release(q_empty);  // every product that reads Q is done: the producer may load the next one
      consumed += tiles;
      const std::size_t head_offset = static_cast<std::size_t>(bh) * seq_len;
      store_rows(o, rows, a.o + head_offset * D, a.lse + head_offset, first_row, seq_len);
    }
    if (consumer == 0) wait_for_turn(0);
  }
#else
  (void)q_map, (void)k_map, (void)v_map, (void)a, (void)schedule;
#endif
}

template <int D>
void launch_head_dim(const PrefillAttentionArgs& a, int sm_count, cudaStream_t stream) {
  using L = SharedLayout<D>;
  // Once per process, before any capture: the launch itself stays capturable.
  static const bool configured = [] {
    KGATE_CUDA_CHECK(
        cudaFuncSetAttribute(fa3_pingpong_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, L::kBytes));
    return true;
  }();
  (void)configured;
  const TileSchedule schedule{.heads_total = a.batch * a.heads,
                              .query_tiles = (a.seq_len + L::kBlockQ - 1) / L::kBlockQ,
                              .causal = a.causal};
  const CUtensorMap q_map = head_tiles_map(a.q, a.batch * a.heads, a.seq_len, D, L::kBlockQ, "fa3_pingpong");
  const CUtensorMap k_map = head_tiles_map(a.k, a.batch * a.kv_heads, a.seq_len, D, kBlockK, "fa3_pingpong");
  const CUtensorMap v_map = head_tiles_map(a.v, a.batch * a.kv_heads, a.seq_len, D, kBlockK, "fa3_pingpong");
  const int blocks = std::min(schedule.tiles(), sm_count);  // one block per SM holds all its shared memory
  fa3_pingpong_kernel<D><<<blocks, L::kThreads, L::kBytes, stream>>>(q_map, k_map, v_map, a, schedule);
  KGATE_CHECK_LAUNCH();
}

void launch(const PrefillAttentionArgs& a, cudaStream_t stream) {
  if (!kBuiltForSm90a)
    throw UnsupportedShape("fa3_pingpong needs sm_90a code (wgmma, setmaxnreg): configure with "
                           "CMAKE_CUDA_ARCHITECTURES including 90a");
  const DeviceProbe& probe = probe_device();
  if (!probe.device || probe.device->compute_capability / 10 != 9)
    throw UnsupportedShape("fa3_pingpong runs on Hopper (compute capability 9.x) only");
  if (static_cast<std::int64_t>(a.batch) * a.heads * a.seq_len > (std::int64_t{1} << 31) - 1)
    throw UnsupportedShape("fa3_pingpong numbers its work tiles and rows in 32 bits");
  prefill::dispatch_head_dim(a, "fa3_pingpong",
                             [&]<int D>() { launch_head_dim<D>(a, probe.device->sm_count, stream); });
}

}  // namespace

KGATE_REGISTER_VARIANT(PrefillAttentionFamily, launch,
                       {.name = "fa3_pingpong",
                        .description = "fa3_wgmma plus FlashAttention-3 scheduling (sm_90a): consumer warpgroups "
                                       "take turns at the tensor cores (named-barrier ping-pong) so one's softmax "
                                       "overlaps another's products, a persistent grid (longest causal tiles "
                                       "first), d64 with three consumers (192 query rows)",
                        .min_compute_capability = 90});

}  // namespace kgate::kernels
