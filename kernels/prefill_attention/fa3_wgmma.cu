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
// Shared memory holds every tile as 128-byte-wide column slabs (64 bf16 of the head dimension,
// one TMA box each) in the 128-byte swizzle that both TMA and wgmma understand, so no thread ever
// touches operand bytes. Tensor maps are 3-D (head_dim, seq_len, heads), so rows past seq_len
// come back as zeros rather than the next head's rows. d128: Q 32 KiB + 2 x (K 32 + V 32) KiB
// = 160 KiB, one block per SM.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kgate/core/cuda_check.hpp"
#include "kgate/results/device.hpp"
#include "kgate/core/registry.hpp"
#include "launch_dispatch.hpp"
#include "prefill_attention.hpp"
#include "tensor_core_softmax.cuh"

namespace kgate::kernels {
namespace {

constexpr int kConsumers = 2;                    // consumer warpgroups
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kBlockQ = 64 * kConsumers;         // query rows per block
constexpr int kBlockK = 128;                     // keys per tile
constexpr int kStages = 2;                       // depth of the K and V rings
constexpr int kSlabWidth = 64;                   // bf16 per 128-byte swizzled row
constexpr int kSlabRowBytes = 128;
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

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ std::uint32_t shared_address(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// --- mbarriers and TMA ---------------------------------------------------------------------------

__device__ __forceinline__ void mbarrier_init(std::uint32_t barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals) : "memory");
}

// The phase with this parity has completed (a fresh barrier counts its "previous" phase, parity 1,
// as completed: the producer's first pass over the ring does not wait).
__device__ __forceinline__ void mbarrier_wait(std::uint32_t barrier, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred complete;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
        "selp.u32 %0, 1, 0, complete;\n}\n"
        : "=r"(done)
        : "r"(barrier), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void mbarrier_arrive(std::uint32_t barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

__device__ __forceinline__ void mbarrier_arrive_expect_bytes(std::uint32_t barrier, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier), "r"(bytes) : "memory");
}

// One box (64 of the head dimension x rows) of a (head_dim, seq_len, heads) tensor map.
__device__ __forceinline__ void tma_load_box(std::uint32_t destination, const CUtensorMap& map, int column, int row,
                                             int head, std::uint32_t barrier) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
          destination),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(column), "r"(row), "r"(head), "r"(barrier)
      : "memory");
}

// --- wgmma ---------------------------------------------------------------------------------------

// Shared-memory matrix descriptor for 128-byte-swizzled operands: start address, leading and
// stride byte offsets (all >> 4, 14 bits each, at bits 0, 16, 32) and the swizzle mode in bits
// 62-63 (1 = 128 bytes). Rows of 128 bytes come in 1 KiB groups of 8, so the stride offset (the
// step between 8-row groups) is 1 KiB for every operand here. The leading offset matters only for
// V, read MN-major: it is the step between 64-wide column slabs. (K-major operands never span a
// second slab in one instruction, and the hardware ignores it there.)
__device__ __forceinline__ std::uint64_t smem_descriptor(std::uint32_t address, std::uint32_t leading_bytes) {
  constexpr std::uint32_t kGroupStride = 8 * kSlabRowBytes;
  return static_cast<std::uint64_t>((address & 0x3FFFF) >> 4) |
         (static_cast<std::uint64_t>(leading_bytes >> 4) << 16) |
         (static_cast<std::uint64_t>(kGroupStride >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(PENDING) : "memory");
}

// The compiler sees a wgmma's registers as read and written at the issuing asm statement, not
// at the fence before it or the wait that completes it, and would move ordinary register work
// across those. An empty asm that claims to modify the registers pins them: right after a wait,
// later reads of an accumulator and later writes over an A fragment stay below it; right before
// a fence, the writes that produced the operands stay above it.
template <int N>
__device__ __forceinline__ void pin_registers(float (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(r[i][e])::"memory");
}
template <int N>
__device__ __forceinline__ void pin_registers(std::uint32_t (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(r[i][e])::"memory");
}

// D (+)= A·B with A (64 x 16, K-major) and B (128 x 16, K-major) in shared memory; scale_d 0 overwrites D.
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[16][4], std::uint64_t a_desc, std::uint64_t b_desc,
                                          int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      :
        "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
        "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),
        "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
        "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),
        "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),
        "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),
        "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),
        "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
      : "l"(a_desc), "l"(b_desc), "r"(scale_d));
}

// D += A·B with A (64 x 16) in registers (the m16n8k16 A-fragment layout per warp) and B in
// shared memory stored MN-major ([k][n], n contiguous): the transposed-B form.
__device__ __forceinline__ void wgmma_rs_n64_bt(float (&d)[8][4], const std::uint32_t (&a)[4], std::uint64_t b_desc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;\n}\n"
      :
        "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
        "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),
        "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
        "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1));
}

// D += A·B with A (64 x 16) in registers (the m16n8k16 A-fragment layout per warp) and B in
// shared memory stored MN-major ([k][n], n contiguous): the transposed-B form.
__device__ __forceinline__ void wgmma_rs_n128_bt(float (&d)[16][4], const std::uint32_t (&a)[4], std::uint64_t b_desc) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
      :
        "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
        "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),
        "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
        "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),
        "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),
        "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),
        "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),
        "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(1));
}

// S = Q·Kᵀ for one warpgroup's 64 rows and a 128-key tile, 16 of the head dimension per
// instruction: step c lies in slab c / 4, 32 bytes into its rows (the hardware applies the
// swizzle to the full address, so stepping the start address inside a 1 KiB atom is exact).
template <int D>
__device__ __forceinline__ void issue_scores(float (&s)[kBlockK / 8][4], std::uint64_t q_desc, std::uint64_t k_desc) {
  using L = SharedLayout<D>;
#pragma unroll
  for (int c = 0; c < D / 16; ++c)
    wgmma_ss_n128(s, q_desc + (((c / 4) * L::kQSlabBytes + (c % 4) * 32) >> 4),
                  k_desc + (((c / 4) * L::kKvSlabBytes + (c % 4) * 32) >> 4), c > 0);
}

// O += P·V for a 128-key tile, 16 keys (two 1 KiB row groups of every slab) per instruction.
template <int D>
__device__ __forceinline__ void issue_output(float (&o)[D / 8][4], const std::uint32_t (&p)[kBlockK / 16][4],
                                             std::uint64_t v_desc) {
#pragma unroll
  for (int k = 0; k < kBlockK / 16; ++k) {
    const std::uint64_t desc = v_desc + ((k * 16 * kSlabRowBytes) >> 4);
    if constexpr (D == 128) {
      wgmma_rs_n128_bt(o, p[k], desc);
    } else {
      wgmma_rs_n64_bt(o, p[k], desc);
    }
  }
}

#endif  // sm_90a device code

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
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the copy engine
  }
  __syncthreads();

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  if (warpgroup == 0) {
    // Producer: 24 registers are plenty for one thread issuing copies; the consumers get the rest.
    asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n" ::: "memory");
    if (threadIdx.x == 0) {
      mbarrier_arrive_expect_bytes(q_full, L::kQBytes);
      for (int slab = 0; slab < L::kSlabs; ++slab)
        tma_load_box(base + slab * L::kQSlabBytes, q_map, slab * kSlabWidth, q0, bh, q_full);
      for (int j = 0; j < tiles; ++j) {
        const int stage = j % kStages;
        const std::uint32_t free_parity = ((j / kStages) & 1) ^ 1;
        mbarrier_wait(k_empty(stage), free_parity);
        mbarrier_arrive_expect_bytes(k_full(stage), L::kKvTileBytes);
        for (int slab = 0; slab < L::kSlabs; ++slab)
          tma_load_box(k_tile(stage) + slab * L::kKvSlabBytes, k_map, slab * kSlabWidth, j * kBlockK, kv_head,
                       k_full(stage));
        mbarrier_wait(v_empty(stage), free_parity);
        mbarrier_arrive_expect_bytes(v_full(stage), L::kKvTileBytes);
        for (int slab = 0; slab < L::kSlabs; ++slab)
          tma_load_box(v_tile(stage) + slab * L::kKvSlabBytes, v_map, slab * kSlabWidth, j * kBlockK, kv_head,
                       v_full(stage));
      }
    }
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n" ::: "memory");
    const int consumer = warpgroup - 1;
    const bool lane0 = (threadIdx.x & 31) == 0;
    const int first_row = q0 + 64 * consumer + 16 * ((static_cast<int>(threadIdx.x) / 32) % 4);  // this warp's 16 rows
    const int unmasked_end = a.causal ? min(seq_len, q0 + 1) : seq_len;  // tiles below need no mask
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
    issue_scores<D>(s, q_desc, k_desc(0));
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
      issue_scores<D>(s, q_desc, k_desc(stage));
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

#if defined(KGATE_HAS_SM90A)
constexpr bool kBuiltForSm90a = true;
#else
constexpr bool kBuiltForSm90a = false;
#endif

// cuTensorMapEncodeTiled through the runtime's driver entry point: kgate binaries do not link
// libcuda (they must load on machines without a driver).
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    KGATE_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || entry == nullptr)
      throw std::runtime_error("the CUDA driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);
  }();
  return encode;
}

// A [heads, seq_len, head_dim] bf16 tensor as TMA boxes of 64 x box_rows (128-byte rows,
// 128-byte swizzle). Three dimensions, so a box reaching past seq_len is zero-filled instead of
// reading the next head. Pure host work: building it at every launch keeps launches capturable.
CUtensorMap head_tiles_map(const __nv_bfloat16* data, int heads, int seq_len, int head_dim, int box_rows) {
  if (reinterpret_cast<std::uintptr_t>(data) % 16 != 0)
    throw UnsupportedShape("fa3_wgmma needs 16-byte aligned q, k and v for TMA");
  CUtensorMap map;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(seq_len),
                              static_cast<cuuint64_t>(heads)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(head_dim) * 2,
                                 static_cast<cuuint64_t>(seq_len) * static_cast<cuuint64_t>(head_dim) * 2};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(kSlabWidth), static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult result = tensor_map_encoder()(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<__nv_bfloat16*>(data), dims, strides, box,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) throw std::runtime_error("cuTensorMapEncodeTiled returned CUresult " + std::to_string(result));
  return map;
}

template <int D>
void launch_head_dim(const PrefillAttentionArgs& a, cudaStream_t stream) {
  constexpr int kSmemBytes = SharedLayout<D>::kBytes;
  // Once per process, before any capture: the launch itself stays capturable.
  static const bool configured = [] {
    KGATE_CUDA_CHECK(
        cudaFuncSetAttribute(fa3_wgmma_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    return true;
  }();
  (void)configured;
  const CUtensorMap q_map = head_tiles_map(a.q, a.batch * a.heads, a.seq_len, D, kBlockQ);
  const CUtensorMap k_map = head_tiles_map(a.k, a.batch * a.kv_heads, a.seq_len, D, kBlockK);
  const CUtensorMap v_map = head_tiles_map(a.v, a.batch * a.kv_heads, a.seq_len, D, kBlockK);
  const dim3 grid(static_cast<unsigned>(a.batch * a.heads), static_cast<unsigned>((a.seq_len + kBlockQ - 1) / kBlockQ));
  fa3_wgmma_kernel<D><<<grid, kThreads, kSmemBytes, stream>>>(q_map, k_map, v_map, a);
  KGATE_CHECK_LAUNCH();
}

void launch(const PrefillAttentionArgs& a, cudaStream_t stream) {
  if (!kBuiltForSm90a)
    throw UnsupportedShape("fa3_wgmma needs sm_90a code (wgmma, setmaxnreg): configure with CMAKE_CUDA_ARCHITECTURES "
                           "including 90a");
  const DeviceProbe& probe = probe_device();
  if (!probe.device || probe.device->compute_capability / 10 != 9)
    throw UnsupportedShape("fa3_wgmma runs on Hopper (compute capability 9.x) only");
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
                        .min_compute_capability = 90});

}  // namespace kgate::kernels
