// The second pass of split-K decode attention: out = Σ_s 2^(lse_s - max) · partial_s / Σ_s 2^(lse_s - max)
// over the pieces of one (sequence, query head). One block per (sequence, query head); its threads
// first find the largest log-sum-exp together, then split the pieces among groups of D/4 lanes
// (a float4 of the head each), so that every thread has only a few pieces' loads to wait for
// instead of walking all of them (at batch 1 the pass is pure latency); the groups' sums meet in
// shared memory in group order, so the result does not depend on timing. Only the pieces the
// sequence used are read, so scratch left by other launches never is.
#include "decode_attention.cuh"

namespace kgate::kernels {
namespace {

constexpr int kMergeThreads = 256;
constexpr int kMinLanes = 16;  // D/4 for the smallest head_dim the split kernel takes (64)

__global__ void __launch_bounds__(kMergeThreads) attention_merge_kernel(AttentionArgs a, int splits) {
  __shared__ float4 group_value[kMergeThreads];
  __shared__ float group_total[kMergeThreads / kMinLanes];
  const std::size_t query = blockIdx.x;  // b * q_heads + head
  const int used = used_splits(a.lengths[query / a.q_heads], splits);
  const float* lse = a.partial_lse + query * splits;

  float top = -INFINITY;
  for (int s = threadIdx.x; s < used; s += kMergeThreads) top = fmaxf(top, lse[s]);
  top = block_max(top);

  const int lanes = a.head_dim / 4, groups = kMergeThreads / lanes;
  const int lane = threadIdx.x % lanes, group = threadIdx.x / lanes;
  const float4* partial = reinterpret_cast<const float4*>(a.partial_out + query * splits * a.head_dim) + lane;
  float4 value = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  float total = 0.0f;
#pragma unroll 4
  for (int s = group; s < used; s += groups) {
    const float weight = fast_exp2(lse[s] - top);
    const float4 p = partial[static_cast<std::size_t>(s) * lanes];
    total += weight;
    value.x += weight * p.x;
    value.y += weight * p.y;
    value.z += weight * p.z;
    value.w += weight * p.w;
  }
  group_value[threadIdx.x] = value;
  if (lane == 0) group_total[group] = total;
  __syncthreads();
  if (threadIdx.x < lanes) {
    float4 sum = group_value[threadIdx.x];
    float denominator = group_total[0];
    for (int g = 1; g < groups; ++g) {
      const float4 more = group_value[g * lanes + threadIdx.x];
      sum.x += more.x;
      sum.y += more.y;
      sum.z += more.z;
      sum.w += more.w;
      denominator += group_total[g];
    }
    __nv_bfloat162* out = reinterpret_cast<__nv_bfloat162*>(a.out + query * a.head_dim) + 2 * threadIdx.x;
    out[0] = __floats2bfloat162_rn(sum.x / denominator, sum.y / denominator);
    out[1] = __floats2bfloat162_rn(sum.z / denominator, sum.w / denominator);
  }
}

}  // namespace

void launch_attention_merge(const AttentionArgs& a, int splits, cudaStream_t stream) {
  // The split kernel takes head_dim 64, 128 and 256 only: D/4 lanes divide the block.
  attention_merge_kernel<<<a.batch * a.q_heads, kMergeThreads, 0, stream>>>(a, splits);
  KGATE_CHECK_LAUNCH();
}

}  // namespace kgate::kernels
