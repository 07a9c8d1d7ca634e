#pragma once
// Sum over a thread block: shuffles within each warp, then one shared-memory exchange between
// warps. Every thread receives the total. Requires blockDim.x to be a multiple of 32.
#include <cuda_runtime.h>

namespace kgate::kernels {

__device__ __forceinline__ float warp_sum(float value) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

__device__ __forceinline__ float block_sum(float value) {
  __shared__ float warp_totals[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  value = warp_sum(value);
  if (lane == 0) warp_totals[warp] = value;
  __syncthreads();
  const int warps = blockDim.x >> 5;
  value = lane < warps ? warp_totals[lane] : 0.0f;
  value = warp_sum(value);
  __syncthreads();  // warp_totals may be reused by a following call
  return value;
}

}  // namespace kgate::kernels
