#pragma once
// Hopper (sm_90a) building blocks any family may use: the slab layout in the 128-byte swizzle,
// mbarriers, TMA box copies from global into shared memory that complete on them, tensor maps of
// bf16 tensors in slabs, and the host-side check that this build has sm_90a code and the GPU is a
// Hopper. The FlashAttention-3 variants add wgmma on top (prefill_attention/sm90_tiles.cuh);
// gemv/streamed feeds a shared-memory ring with box copies of W and x.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kgate/core/cuda_check.hpp"
#include "kgate/core/family.hpp"
#include "kgate/measure/device.hpp"
#include "packed.cuh"  // shared_address

namespace kgate::kernels {

// Operands in shared memory as slabs of 128-byte rows (64 bf16) in the 128-byte swizzle, which TMA
// writes and wgmma reads, and ldmatrix reads without bank conflicts: the 16-byte chunk c of row r
// sits at chunk c ^ (r mod 8), so a slab must start on a 1 KiB boundary.
inline constexpr int kSlabWidth = 64;  // bf16 per 128-byte swizzled row
inline constexpr int kSlabRowBytes = 128;

// The byte offset of 16-byte chunk `chunk` (0-7) of row `row` in a slab.
__host__ __device__ constexpr std::uint32_t swizzled_chunk(int row, int chunk) {
  return static_cast<std::uint32_t>(row * kSlabRowBytes + ((chunk ^ (row & 7)) << 4));
}

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ void mbarrier_init(std::uint32_t barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals) : "memory");
}

// After a block's mbarrier_init calls, before __syncthreads: the copy engine sees the barriers.
__device__ __forceinline__ void fence_barrier_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

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

// One box of a 3-D tensor map, at coordinates (x, y, z) with x innermost, into shared memory laid
// out as the map's swizzle says; the box's bytes (the whole box, zeros past the tensor's bounds
// included) count toward `barrier`'s expected bytes.
__device__ __forceinline__ void tma_load_box(std::uint32_t destination, const CUtensorMap& map, int x, int y, int z,
                                             std::uint32_t barrier) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
                   destination),
               "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(x), "r"(y), "r"(z), "r"(barrier)
               : "memory");
}

#endif  // sm_90a device code

// cuTensorMapEncodeTiled through the runtime's driver entry point: kgate binaries do not link
// libcuda (they must load on machines without a driver).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    KGATE_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &entry, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || entry == nullptr) throw std::runtime_error("the CUDA driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(entry);
  }();
  return encode;
}

// A [planes, rows, row_length] bf16 tensor (attention's [heads, seq_len, head_dim], a matrix as one
// plane) as TMA boxes of 64 x box_rows in slabs. Three dimensions, so a box reaching past `rows`
// is zero-filled instead of reading the next plane. Pure host work: building it at every launch
// keeps launches capturable. `variant` names the refusal. `promotion`: attention's K and V are
// read again by the next query tiles, and the 256-byte L2 fills serve them; a GEMV streams its
// matrix once, and on an H200 its copies ran up to 7% faster without promotion.
inline CUtensorMap slab_boxes_map(const __nv_bfloat16* data, int planes, int rows, int row_length, int box_rows, std::string_view variant,
                                  CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  if (reinterpret_cast<std::uintptr_t>(data) % 16 != 0)
    throw UnsupportedShape(std::string(variant) + " needs 16-byte aligned tensors for TMA");
  CUtensorMap map;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(row_length), static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(planes)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(row_length) * 2,
                                 static_cast<cuuint64_t>(rows) * static_cast<cuuint64_t>(row_length) * 2};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(kSlabWidth), static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult result = tensor_map_encoder()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<__nv_bfloat16*>(data), dims, strides,
                                               box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, promotion,
                                               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS)
    throw std::runtime_error(std::string(variant) + ": cuTensorMapEncodeTiled returned CUresult " + std::to_string(result));
  return map;
}

// The sm_90a code (wgmma, setmaxnreg, the TMA copies above) exists only in the arch-specific
// target, and the host cannot tell at run time whether the binary has it: the build defines
// KGATE_HAS_SM90A for the files that include this header when it compiles for 90a
// (kernels/CMakeLists.txt), and without it the variants report themselves unsupported instead of
// launching an empty sm_90 kernel.
#if defined(KGATE_HAS_SM90A)
inline constexpr bool kBuiltForSm90a = true;
#else
inline constexpr bool kBuiltForSm90a = false;
#endif

// The device, where this build has sm_90a code and it is a Hopper GPU; otherwise UnsupportedShape
// saying which is missing.
// variant is a view, not a const std::string&: g++ 13's -Wdangling-reference took the returned
// reference for one into the temporary string a literal argument makes.
inline const DeviceInfo& require_hopper(std::string_view variant) {
  if (!kBuiltForSm90a)
    throw UnsupportedShape(std::string(variant) + " needs sm_90a code: configure with CMAKE_CUDA_ARCHITECTURES including 90a");
  const DeviceProbe& probe = probe_device();
  if (!probe.device || probe.device->compute_capability / 10 != 9)
    throw UnsupportedShape(std::string(variant) + " runs on Hopper (compute capability 9.x) only");
  return *probe.device;
}

}  // namespace kgate::kernels
