#pragma once
// Register-level helpers for 16-byte memory traffic: unpacking eight bf16 values held in a uint4,
// fp32 vectors, and the inline PTX the hot loops need (cache-hinted loads, asynchronous copies,
// rcp, ex2, tensor-core MMA).
#include <cuda_bf16.h>

#include <cstdint>

namespace kgate::kernels {

// bf16 is the upper half of an fp32: widening is a shift or a mask, exact.
__device__ __forceinline__ void bf16x8_to_floats(const uint4& raw, float (&out)[8]) {
  const std::uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = __uint_as_float(words[i] << 16);
    out[2 * i + 1] = __uint_as_float(words[i] & 0xFFFF0000u);
  }
}

template <int VEC>
struct alignas(4 * VEC) FloatVector {
  float values[VEC];
};

template <int VEC>
__device__ __forceinline__ void load_fp32(const float* base, int vector_index, float (&out)[VEC]) {
  const FloatVector<VEC> v = reinterpret_cast<const FloatVector<VEC>*>(base)[vector_index];
#pragma unroll
  for (int i = 0; i < VEC; ++i) out[i] = v.values[i];
}

// For data each block reads exactly once (weights, the KV cache): read-only path, and no L1
// allocation, so operands that are reused (the activations) keep their L1 lines.
__device__ __forceinline__ uint4 load_once_16B(const void* address) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(address));
  return v;
}

// Asynchronous 16-byte copies from global to shared memory (sm_80+), bypassing L1. They hold no
// registers while in flight and complete as a group, so a thread can keep many in flight however
// ptxas schedules the arithmetic around them (it sinks ordinary loads below MUFU-heavy code).
// valid = false fills the 16 bytes with zeros and reads nothing.
// FETCH_256B, for streams that read every byte of their lines (the KV cache): the L2 is asked to
// fetch the aligned 256 bytes around the sectors from DRAM (.L2::256B), longer bursts for the
// same bytes. Split-K decode attention with it was 0.1-1% faster on an H100 at 14 of its 16 bench
// shapes (contiguous and paged), up to 3% at b 1.
template <bool FETCH_256B = false>
__device__ __forceinline__ void copy_16B_async(void* shared, const void* global, bool valid) {
  const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  if constexpr (FETCH_256B)
    asm volatile("cp.async.cg.shared.global.L2::256B [%0], [%1], 16, %2;" ::"r"(destination), "l"(global), "r"(valid ? 16 : 0) : "memory");
  else asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(destination), "l"(global), "r"(valid ? 16 : 0) : "memory");
}

// Closes the group of copies this thread issued since the last commit.
__device__ __forceinline__ void commit_async_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Waits until at most PENDING of this thread's committed groups are still in flight; the others'
// bytes are then visible to this thread (other threads need a barrier as well).
template <int PENDING>
__device__ __forceinline__ void wait_async_copies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(PENDING) : "memory");
}

// 1/x in one MUFU instruction (1 ulp; subnormal results kept, 1/inf = 0), where an IEEE division
// would add a refinement and a branch to its slow path per element.
__device__ __forceinline__ float fast_reciprocal(float x) {
  float y;
  asm("rcp.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// 2^x in one MUFU instruction (2 ulp; results below 2^-126 flush to zero, which a softmax weight
// that small is anyway). 2^-inf = +0.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Two floats rounded to bf16 in one 32-bit register, `low` in the low half: an MMA operand pair.
__device__ __forceinline__ std::uint32_t pack_bf16x2(float low, float high) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(low, high);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

// Two floats (`first` in the low halves) as two bf16 pairs that add up to them to about 16 significant bits: `high` rounds them
// to bf16 and `rest` rounds what that leaves out. Products of both with the same bf16 operand,
// added in fp32, come within 2^-16 of the fp32 values' product, where `high` alone is off by up to
// 2^-9.
__device__ __forceinline__ void split_bf16x2(float first, float second, std::uint32_t& high, std::uint32_t& rest) {
  const __nv_bfloat162 rounded = __floats2bfloat162_rn(first, second);
  high = *reinterpret_cast<const std::uint32_t*>(&rounded);
  rest = pack_bf16x2(first - __low2float(rounded), second - __high2float(rounded));
}

// d += A·B for one m16n8k16 bf16 tensor-core tile with fp32 accumulation (sm_80+). Fragment
// layout (lane = 4·g + t): a0 = A[g][2t..2t+1], a1 = A[g+8][2t..], a2 = A[g][2t+8..],
// a3 = A[g+8][2t+8..]; b0 = B[2t..2t+1][g], b1 = B[2t+8..2t+9][g]; d0, d1 = D[g][2t, 2t+1],
// d2, d3 = D[g+8][2t, 2t+1]. Each 32-bit register holds two bf16, the lower k in the low half.
__device__ __forceinline__ void mma_bf16_16x8x16(float (&d)[4], std::uint32_t a0, std::uint32_t a1, std::uint32_t a2, std::uint32_t a3,
                                                 std::uint32_t b0, std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// A shared-memory pointer as the 32-bit address that ldmatrix, cp.async.bulk and mbarriers take.
__device__ __forceinline__ std::uint32_t shared_address(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// Four 8x8 matrices of 16-bit values from shared memory (sm_75+): lanes 8q..8q+7 give the
// addresses of matrix q's eight 16-byte rows, and register q of lane 4g + t receives row g's
// values 2t and 2t+1 of matrix q. `trans` gives the transposed matrices (column g, rows 2t, 2t+1).
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(address));
}

}  // namespace kgate::kernels
