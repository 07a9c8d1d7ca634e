#pragma once
// Sum and maximum over a thread block: shuffles within each warp, then one shared-memory exchange
// between warps. Every thread receives the result. Requires blockDim.x to be a multiple of 32.
#include <cuda_runtime.h>

namespace kgate::kernels {

struct SumOp {
  static constexpr float kIdentity = 0.0f;
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  static constexpr float kIdentity = -__builtin_huge_valf();
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

template <class Op>
__device__ __forceinline__ float warp_reduce(float value, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

// kLast: the kernel's last block reduction. Nothing reuses the exchange after it, so the barrier that
// guards the exchange for a following call is left out.
template <class Op, bool kLast = false>
__device__ __forceinline__ float block_reduce(float value, Op op) {
  __shared__ float warp_results[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  value = warp_reduce(value, op);
  if (lane == 0) warp_results[warp] = value;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  value = lane < warps ? warp_results[lane] : Op::kIdentity;
  value = warp_reduce(value, op);
  if constexpr (!kLast) __syncthreads();  // warp_results may be reused by a following call
  return value;
}

__device__ __forceinline__ float warp_sum(float value) { return warp_reduce(value, SumOp{}); }
__device__ __forceinline__ float block_sum(float value) { return block_reduce(value, SumOp{}); }
__device__ __forceinline__ float block_sum_last(float value) { return block_reduce<SumOp, true>(value, SumOp{}); }
__device__ __forceinline__ float block_max(float value) { return block_reduce(value, MaxOp{}); }

}  // namespace kgate::kernels
