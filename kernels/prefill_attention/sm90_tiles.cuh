#pragma once
// The Hopper (sm_90a) building blocks of the FlashAttention-3 variants (fa3_wgmma, fa3_pingpong):
// TMA stores and ring-tile loads of 128-byte-swizzled column slabs, and wgmma on those slabs. The
// mbarriers, the slabs' layout, TMA box loads, the tensor maps and the check that the build and
// the GPU have sm_90a are ../common/sm90.cuh.
//
// Shared memory holds every tile as 128-byte-wide column slabs (64 bf16 of the head dimension,
// one TMA box each) in the 128-byte swizzle that both TMA and wgmma understand, so no thread ever
// touches operand bytes.
#include <cuda.h>

#include <cstdint>

#include "../common/sm90.cuh"

namespace kgate::kernels {

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The reverse: one box from shared memory (in the same swizzled layout) to a (head_dim, seq_len,
// heads) tensor map; rows past seq_len are not written. Completes in bulk groups (commit, wait).
__device__ __forceinline__ void tma_store_box(const CUtensorMap& map, std::uint32_t source, int column, int row, int head) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   reinterpret_cast<std::uint64_t>(&map)),
               "r"(column), "r"(row), "r"(head), "r"(source)
               : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Until the committed stores have read their shared memory (it may be written again) ...
__device__ __forceinline__ void tma_store_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
// ... or until their writes are done.
__device__ __forceinline__ void tma_store_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
// Orders this thread's ordinary shared-memory writes before the copy engine's reads of them.
__device__ __forceinline__ void fence_shared_for_tma() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// The producer's copy of one tile (`rows` rows from `row` of one head, SLABS slabs of SLAB_BYTES
// each) into a ring stage: waits until the consumers have released the stage (`empty` completes
// the phase `free_parity`), arms `full` with the tile's bytes and issues one box per slab.
template <int SLABS, int SLAB_BYTES>
__device__ __forceinline__ void load_ring_tile(std::uint32_t destination, std::uint32_t full, std::uint32_t empty,
                                               std::uint32_t free_parity, const CUtensorMap& map, int row, int head) {
  mbarrier_wait(empty, free_parity);
  mbarrier_arrive_expect_bytes(full, SLABS * SLAB_BYTES);
  for (int slab = 0; slab < SLABS; ++slab) tma_load_box(destination + slab * SLAB_BYTES, map, slab * kSlabWidth, row, head, full);
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
  return static_cast<std::uint64_t>((address & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>(leading_bytes >> 4) << 16) |
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
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[16][4], std::uint64_t a_desc, std::uint64_t b_desc, int scale_d) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
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
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
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
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
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
// Q's and K's slabs are QSlabBytes and KSlabBytes apart.
template <int D, int QSlabBytes, int KSlabBytes>
__device__ __forceinline__ void issue_scores(float (&s)[16][4], std::uint64_t q_desc, std::uint64_t k_desc) {
#pragma unroll
  for (int c = 0; c < D / 16; ++c)
    wgmma_ss_n128(s, q_desc + (((c / 4) * QSlabBytes + (c % 4) * 32) >> 4), k_desc + (((c / 4) * KSlabBytes + (c % 4) * 32) >> 4), c > 0);
}

// O += P·V for a 128-key tile, 16 keys (two 1 KiB row groups of every slab) per instruction.
template <int D>
__device__ __forceinline__ void issue_output(float (&o)[D / 8][4], const std::uint32_t (&p)[8][4], std::uint64_t v_desc) {
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    const std::uint64_t desc = v_desc + ((k * 16 * kSlabRowBytes) >> 4);
    if constexpr (D == 128) {
      wgmma_rs_n128_bt(o, p[k], desc);
    } else {
      wgmma_rs_n64_bt(o, p[k], desc);
    }
  }
}

#endif  // sm_90a device code

}  // namespace kgate::kernels
