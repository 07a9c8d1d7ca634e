#pragma once
// Vectors of VEC bf16 values (16 bytes when VEC = 8) for the vectorized kernels, and the
// row-in-registers plumbing of the normalization kernels: a row of n elements is read as n / VEC
// vectors, thread t holding vectors t, t + blockDim.x, ... (K of them), so each warp access is
// contiguous.
#include <cuda_bf16.h>

#include <cstdint>
#include <cstring>

#include "row_plan.hpp"

namespace kgate::kernels {

template <int VEC>
struct alignas(2 * VEC) BF16Vector {
  __nv_bfloat16 values[VEC];
};

template <int VEC>
__device__ __forceinline__ void load_floats(const __nv_bfloat16* base, int vector_index, float (&out)[VEC]) {
  const BF16Vector<VEC> v = reinterpret_cast<const BF16Vector<VEC>*>(base)[vector_index];
#pragma unroll
  for (int i = 0; i < VEC; ++i) out[i] = __bfloat162float(v.values[i]);
}

template <int VEC>
__device__ __forceinline__ void store_floats(__nv_bfloat16* base, int vector_index, const float (&in)[VEC]) {
  BF16Vector<VEC> v;
#pragma unroll
  for (int i = 0; i < VEC; ++i) v.values[i] = __float2bfloat16_rn(in[i]);
  reinterpret_cast<BF16Vector<VEC>*>(base)[vector_index] = v;
}

// For elementwise kernels that read each vector once and then overwrite it in place (the
// non-coherent path must not read such data) and for stores never read back: 16-byte vectors are
// loaded and stored with the streaming (evict-first) hint, so they do not crowd out of the caches
// what is reused; narrower vectors use plain accesses.
template <int VEC>
__device__ __forceinline__ BF16Vector<VEC> load_vector_evict_first(const BF16Vector<VEC>* address) {
  if constexpr (sizeof(BF16Vector<VEC>) == 16) {
    const uint4 raw = __ldcs(reinterpret_cast<const uint4*>(address));
    BF16Vector<VEC> v;
    memcpy(&v, &raw, sizeof(v));
    return v;
  } else {
    return *address;
  }
}

template <int VEC>
__device__ __forceinline__ void store_vector_evict_first(BF16Vector<VEC>* address, const BF16Vector<VEC>& v) {
  if constexpr (sizeof(BF16Vector<VEC>) == 16) {
    uint4 raw;
    memcpy(&raw, &v, sizeof(raw));
    __stcs(reinterpret_cast<uint4*>(address), raw);
  } else {
    *address = v;
  }
}

// An empty asm that claims to rewrite the vector's words: the compiler must keep the packed words
// themselves alive until here and widen them after it, instead of widening them as soon as they
// arrive (or reusing values widened earlier) and holding twice the registers. Seen (ptxas, sm_90a):
// rmsnorm/weight_first 49 -> 32 registers at two vectors per thread, rope/token_block at four heads
// per thread 98 -> 64.
template <int VEC>
__device__ __forceinline__ BF16Vector<VEC> kept_packed(BF16Vector<VEC> v) {
  if constexpr (sizeof(v) % 4 == 0) {
    std::uint32_t words[sizeof(v) / 4];
    memcpy(words, &v, sizeof(v));
#pragma unroll
    for (auto& word : words) asm volatile("" : "+r"(word));
    memcpy(&v, words, sizeof(v));
  } else {
    unsigned short half;
    memcpy(&half, &v, sizeof(v));
    asm volatile("" : "+h"(half));
    memcpy(&v, &half, sizeof(v));
  }
  return v;
}

// Calls launch.template operator()<VEC, K>() for the plan's compile-time pair.
template <class Launch>
void dispatch_row_plan(const RowPlan& plan, Launch&& launch) {
  auto with_k = [&]<int VEC>() {
    switch (plan.per_thread) {
      case 1: launch.template operator()<VEC, 1>(); break;
      case 2: launch.template operator()<VEC, 2>(); break;
      case 4: launch.template operator()<VEC, 4>(); break;
      case 8: launch.template operator()<VEC, 8>(); break;
      default: launch.template operator()<VEC, 16>(); break;
    }
  };
  dispatch_vector_width(plan.vec, with_k);  // plan.vec is already the widest width dividing n
}

}  // namespace kgate::kernels
