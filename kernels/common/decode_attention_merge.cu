// The second pass of split-K decode attention: out = Σ_s 2^(lse_s - max) · partial_s / Σ_s 2^(lse_s - max)
// over the pieces of one (sequence, query head). One block of head_dim threads each; every thread
// walks the piece's log-sum-exps (a broadcast read) and its own element of each partial output.
// Only the pieces the sequence used are read, so scratch left by other launches never is.
#include "decode_attention.cuh"

namespace kgate::kernels {
namespace {

__global__ void attention_merge_kernel(AttentionArgs a, int splits) {
  const std::size_t query = blockIdx.x;  // b * q_heads + head
  const int used = used_splits(a.lengths[query / a.q_heads], splits);
  const float* lse = a.partial_lse + query * splits;
  const float* partial = a.partial_out + query * splits * a.head_dim + threadIdx.x;
  float top = -INFINITY;
  for (int s = 0; s < used; ++s) top = fmaxf(top, lse[s]);
  float sum = 0.0f, value = 0.0f;
#pragma unroll 4
  for (int s = 0; s < used; ++s) {
    const float weight = fast_exp2(lse[s] - top);
    sum += weight;
    value += weight * partial[static_cast<std::size_t>(s) * a.head_dim];
  }
  a.out[query * a.head_dim + threadIdx.x] = __float2bfloat16_rn(value / sum);
}

}  // namespace

void launch_attention_merge(const AttentionArgs& a, int splits, cudaStream_t stream) {
  attention_merge_kernel<<<a.batch * a.q_heads, a.head_dim, 0, stream>>>(a, splits);
  KGATE_CHECK_LAUNCH();
}

}  // namespace kgate::kernels
