// FlashAttention-3 structure on Hopper (sm_90a only): TMA bulk tensor copies completing on
// mbarriers, wgmma from shared memory, and producer/consumer warp specialization.
//
// A block of three warpgroups owns 128 query rows of one (batch, head). Warpgroup 0 is the
// producer: after giving most of its registers away (setmaxnreg), one thread issues every copy —
// the Q tile once, then each 128-key K and V tile into a two-stage ring — and each copy signals a
// "full" mbarrier with its byte count. Warpgroups 1 and 2 are consumers of 64 query rows each:
// S = Q·Kᵀ as wgmma m64n128k16 with both operands in shared memory, the online softmax in
// registers (tensor_core_softmax.cuh: the wgmma accumulator gives each warp the same 16-row
// fragment as mma.sync), then O += P·V as wgmma with P straight from registers (the S
// accumulator of 16 keys is exactly the A-register fragment) and V in shared memory read
// transposed. A consumer releases a stage by arriving on its "empty" mbarrier, which the producer
// waits on before refilling it.
//
// Within a consumer the softmax of tile j overlaps the tensor cores: it issues S_{j+1} = Q·K_{j+1}ᵀ
// and O += P_j·V_j back to back, waits only for S_{j+1}, and runs that tile's softmax while the
// P·V product is still in flight. The two consumers also interleave on the SM's scheduler.
//
// Shared memory holds every tile as 128-byte-swizzled column slabs (sm90_tiles.cuh, shared with
// fa3_pingpong, the next step). Tensor maps are 3-D (head_dim, seq_len, heads), so rows past seq_len
// come back as zeros rather than the next head's rows. d128: Q 32 KiB + 2 x (K 32 + V 32) KiB
// = 160 KiB, one block per SM.
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "../common/launch_limits.hpp"
#include "kgate/core/cuda_check.hpp"
#include "kgate/results/device.hpp"
#include "kgate/core/registry.hpp"
#include "launch_dispatch.hpp"
#include "prefill_attention.hpp"
#include "sm90_tiles.cuh"
#include "tensor_core_softmax.cuh"

namespace kgate::kernels {
namespace {

constexpr int kConsumers = 2;  // consumer warpgroups
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kBlockQ = 64 * kConsumers;  // query rows per block
constexpr int kBlockK = 128;              // keys per tile
constexpr int kStages = 2;                // depth of the K and V rings
constexpr int kMaxGridY = 65535;

template <int D>
struct SharedLayout {
  static constexpr int kSlabs = D / kSlabWidth;
  static constexpr int kQSlabBytes = kBlockQ * kSlabRowBytes;
  static constexpr int kKvSlabBytes = kBlockK * kSlabRowBytes;
  static constexpr int kQBytes = kSlabs * kQSlabBytes;
  static constexpr int kKvTileBytes = kSlabs * kKvSlabBytes;
  static constexpr int kK = kQBytes;                             // K ring
  static constexpr int kV = kK + kStages * kKvTileBytes;         // V ring
  static constexpr int kBarriers = kV + kStages * kKvTileBytes;  // q_full, then per stage k_full, k_empty, v_full, v_empty
  static constexpr int kBarrierCount = 1 + 4 * kStages;
  // The swizzle pattern repeats every 1 KiB: tiles must start on such a boundary, so the launch
  // asks for 1 KiB of slack to align the dynamic shared memory.
  static constexpr int kBytes = kBarriers + 8 * kBarrierCount + 1024;
};

template <int D>
__global__ void __launch_bounds__(kThreads, 1)
    fa3_wgmma_kernel(const __grid_constant__ CUtensorMap q_map, const __grid_constant__ CUtensorMap k_map,
                     const __grid_constant__ CUtensorMap v_map, const PrefillAttentionArgs a) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using L = SharedLayout<D>;
  extern __shared__ unsigned char smem[];
  const std::uint32_t base = (shared_address(smem) + 1023u) & ~1023u;
  const std::uint32_t q_full = base + L::kBarriers;
  const auto k_full = [&](int stage) { return q_full + 8 * (1 + 4 * stage); };
  const auto k_empty = [&](int stage) { return q_full + 8 * (2 + 4 * stage); };
  const auto v_full = [&](int stage) { return q_full + 8 * (3 + 4 * stage); };
  const auto v_empty = [&](int stage) { return q_full + 8 * (4 + 4 * stage); };
  const auto k_tile = [&](int stage) { return base + L::kK + stage * L::kKvTileBytes; };
  const auto v_tile = [&](int stage) { return base + L::kV + stage * L::kKvTileBytes; };

  const int seq_len = a.seq_len;
  const int bh = static_cast<int>(blockIdx.x);  // batch · heads + head
  const int kv_head = (bh / a.heads) * a.kv_heads + (bh % a.heads) / (a.heads / a.kv_heads);
  // Query tiles in decreasing order: under a causal mask the last tiles have the most keys, and
  // starting them first keeps the final wave short.
  const int q0 = static_cast<int>(gridDim.y - 1 - blockIdx.y) * kBlockQ;
  const int key_end = a.causal ? min(seq_len, q0 + kBlockQ) : seq_len;
  const int tiles = (key_end + kBlockK - 1) / kBlockK;

  if (threadIdx.x == 0) {
    mbarrier_init(q_full, 1);
    for (int stage = 0; stage < kStages; ++stage) {
      mbarrier_init(k_full(stage), 1);  // the producer's arrive; the bytes complete it
      mbarrier_init(v_full(stage), 1);
      mbarrier_init(k_empty(stage), 4 * kConsumers);  // one arrive per consumer warp
      mbarrier_init(v_empty(stage), 4 * kConsumers);
    }
    fence_barrier_init();  // visible to the copy engine
  }
  __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    // Producer: 24 registers are plenty for one thread issuing copies; the consumers get the rest.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_bytes(q_full, L::kQBytes);
      for (int slab = 0; slab < L::kSlabs; ++slab) tma_load_box(base + slab * L::kQSlabBytes, q_map, slab * kSlabWidth, q0, bh, q_full);
      for (int j = 0; j < tiles; ++j) {
        const int stage = j % kStages;
        const std::uint32_t free_parity = ((j / kStages) & 1) ^ 1;
        load_ring_tile<L::kSlabs, L::kKvSlabBytes>(k_tile(stage), k_full(stage), k_empty(stage), free_parity, k_map, j * kBlockK, kv_head);
        load_ring_tile<L::kSlabs, L::kKvSlabBytes>(v_tile(stage), v_full(stage), v_empty(stage), free_parity, v_map, j * kBlockK, kv_head);
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::: "memory");
    const int consumer = warpgroup - 1;
    const bool lane0 = (threadIdx.x & 31) == 0;
    const int first_row = q0 + 64 * consumer + 16 * ((static_cast<int>(threadIdx.x) / 32) % 4);  // this warp's 16 rows
    const int unmasked_end = a.causal ? min(seq_len, q0 + 1) : seq_len;                          // tiles below need no mask
    const float scale_log2 = a.scale * 1.4426950408889634f;
    const std::uint64_t q_desc = smem_descriptor(base + consumer * 64 * kSlabRowBytes, 16);
    const auto k_desc = [&](int stage) { return smem_descriptor(k_tile(stage), 16); };
    const auto v_desc = [&](int stage) { return smem_descriptor(v_tile(stage), L::kKvSlabBytes); };
    const auto release = [&](std::uint32_t barrier) {
      if (lane0) mbarrier_arrive(barrier);
    };

    float s[kBlockK / 8][4];
    float o[D / 8][4] = {};
    std::uint32_t p[kBlockK / 16][4];
    SoftmaxRows rows;
    // Tiles [0, unmasked_tiles) are visible to every query row of the block; the rest (the
    // diagonal, the ragged end) are masked. Two loops rather than a branch: control flow inside
    // the overlapped region below makes ptxas wait for the P·V product before the softmax.
    const int unmasked_tiles = min(tiles, unmasked_end / kBlockK);

    mbarrier_wait(q_full, 0);
    mbarrier_wait(k_full(0), 0);
    wgmma_fence();
    issue_scores<D, L::kQSlabBytes, L::kKvSlabBytes>(s, q_desc, k_desc(0));
    wgmma_commit();
    wgmma_wait<0>();
    pin_registers(s);
    release(k_empty(0));
    float rescale[2];  // nothing accumulated yet: tile 0 needs no rescale
    if (unmasked_tiles == 0) mask_scores(s, 0, first_row, seq_len, a.causal);
    softmax_tile(s, rows, scale_log2, rescale);
    mbarrier_wait(v_full(0), 0);
    probabilities_to_a_fragments(s, p);

    // Step j: S_j = Q·K_jᵀ and O += P_{j-1}·V_{j-1} go to the tensor cores back to back; the
    // softmax of S_j runs while the second is still in flight.
    const auto step = [&](int j, auto masked) {
      const int stage = j % kStages, previous = (j - 1) % kStages;
      mbarrier_wait(k_full(stage), (j / kStages) & 1);
      pin_registers(o);
      pin_registers(p);
      wgmma_fence();  // orders this thread's writes of p and o before the products below read them
      issue_scores<D, L::kQSlabBytes, L::kKvSlabBytes>(s, q_desc, k_desc(stage));
      wgmma_commit();
      issue_output<D>(o, p, v_desc(previous));  // V_{j-1} was waited for in the previous step
      wgmma_commit();
      wgmma_wait<1>();  // S_j is done
      pin_registers(s);
      release(k_empty(stage));
      if constexpr (decltype(masked)::value) mask_scores(s, j * kBlockK, first_row, seq_len, a.causal);
      softmax_tile(s, rows, scale_log2, rescale);
      // V_j is needed by the next step anyway; waiting for it here also keeps the softmax above
      // the wait for P·V: ptxas hoists that wait to the top of its basic block, and the barrier's
      // retry branch starts a new one.
      mbarrier_wait(v_full(stage), (j / kStages) & 1);
      wgmma_wait<0>();
      pin_registers(o);
      pin_registers(p);
      release(v_empty(previous));
      rescale_rows(o, rescale);
      probabilities_to_a_fragments(s, p);
    };
    int j = 1;
    for (; j < unmasked_tiles; ++j) step(j, std::false_type{});
    for (; j < tiles; ++j) step(j, std::true_type{});

    pin_registers(o);
    pin_registers(p);
    wgmma_fence();
    issue_output<D>(o, p, v_desc((tiles - 1) % kStages));
    wgmma_commit();
    wgmma_wait<0>();
    pin_registers(o);
    const std::size_t head_offset = static_cast<std::size_t>(bh) * seq_len;
    store_rows(o, rows, a.o + head_offset * D, a.lse + head_offset, first_row, seq_len);
  }
#else
  (void)q_map, (void)k_map, (void)v_map, (void)a;
#endif
}

template <int D>
void launch_head_dim(const PrefillAttentionArgs& a, cudaStream_t stream) {
  constexpr int kSmemBytes = SharedLayout<D>::kBytes;
  allow_dynamic_shared<fa3_wgmma_kernel<D>, kSmemBytes>();  // once per process, before any capture
  const CUtensorMap q_map = slab_boxes_map(a.q, a.batch * a.heads, a.seq_len, D, kBlockQ, "fa3_wgmma");
  const CUtensorMap k_map = slab_boxes_map(a.k, a.batch * a.kv_heads, a.seq_len, D, kBlockK, "fa3_wgmma");
  const CUtensorMap v_map = slab_boxes_map(a.v, a.batch * a.kv_heads, a.seq_len, D, kBlockK, "fa3_wgmma");
  const dim3 grid(static_cast<unsigned>(a.batch * a.heads), static_cast<unsigned>((a.seq_len + kBlockQ - 1) / kBlockQ));
  fa3_wgmma_kernel<D><<<grid, kThreads, kSmemBytes, stream>>>(q_map, k_map, v_map, a);
  KGATE_CHECK_LAUNCH();
}

void launch(const PrefillAttentionArgs& a, cudaStream_t stream) {
  require_hopper("fa3_wgmma");
  if ((a.seq_len + kBlockQ - 1) / kBlockQ > kMaxGridY)
    throw UnsupportedShape("seq_len above " + std::to_string(kMaxGridY * kBlockQ) + ": too many query tiles for the grid");
  prefill::dispatch_head_dim(a, "fa3_wgmma", [&]<int D>() { launch_head_dim<D>(a, stream); });
}

}  // namespace

KGATE_REGISTER_VARIANT(PrefillAttentionFamily, launch,
                       {.name = "fa3_wgmma",
                        .description = "FlashAttention-3 structure (sm_90a): TMA tiles on mbarriers, wgmma from "
                                       "128B-swizzled shared memory, 1 producer + 2 consumer warpgroups, softmax "
                                       "overlapped with the P·V product",
                        .min_compute_capability = 90,
                        .follows = "fa2_mma"});

}  // namespace kgate::kernels
