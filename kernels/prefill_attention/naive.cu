// The straightforward prefill attention, and the family's reference on shapes too long for the
// fp64 host reference: one block per query row materializes the row's scores in shared memory
// (fp32, one warp per key with the lanes across head_dim), takes their softmax with accurate expf,
// writes the log-sum-exp, then multiplies the probabilities by V (each thread one column over a
// share of the keys). With the causal mask a row stops at its own key. Nothing is tiled or reused
// between rows: every row reads its KV head's K and V whole.
#include <stdexcept>
#include <string>

#include "../common/block_reduce.cuh"
#include "kgate/core/registry.hpp"
#include "prefill_attention.hpp"

namespace kgate::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

__global__ void __launch_bounds__(kThreads) naive_attention_kernel(PrefillAttentionArgs a) {
  extern __shared__ float shared[];
  float* query = shared;                // [head_dim], scaled
  float* scores = shared + a.head_dim;  // [visible keys]: scores, then unnormalized probabilities
  __shared__ float column_parts[kThreads];

  // blockIdx.x = (b * heads + h) * seq_len + row: q, o and lse are laid out in this order.
  const std::size_t query_row = blockIdx.x;
  const int row = static_cast<int>(query_row % a.seq_len);
  const int head_index = static_cast<int>(query_row / a.seq_len);  // b * heads + h
  const int b = head_index / a.heads, h = head_index % a.heads;
  const int kv_head = h / (a.heads / a.kv_heads);
  const std::size_t kv_first = (static_cast<std::size_t>(b) * a.kv_heads + kv_head) * a.seq_len * a.head_dim;
  const __nv_bfloat16* keys = a.k + kv_first;
  const __nv_bfloat16* values = a.v + kv_first;

  for (int e = threadIdx.x; e < a.head_dim; e += kThreads) query[e] = __bfloat162float(a.q[query_row * a.head_dim + e]) * a.scale;
  __syncthreads();

  const int visible = a.causal ? row + 1 : a.seq_len;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int j = warp; j < visible; j += kWarps) {
    const __nv_bfloat16* key = keys + static_cast<std::size_t>(j) * a.head_dim;
    float dot = 0.0f;
    for (int e = lane; e < a.head_dim; e += 32) dot += query[e] * __bfloat162float(key[e]);
    dot = warp_sum(dot);
    if (lane == 0) scores[j] = dot;
  }
  __syncthreads();

  float top = -INFINITY;
  for (int j = threadIdx.x; j < visible; j += kThreads) top = fmaxf(top, scores[j]);
  top = block_max(top);
  float total = 0.0f;
  for (int j = threadIdx.x; j < visible; j += kThreads) total += (scores[j] = expf(scores[j] - top));
  total = block_sum(total);  // its barriers also publish the probabilities
  if (threadIdx.x == 0) a.lse[query_row] = top + logf(total);

  const int parts = kThreads / a.head_dim;
  const int column = threadIdx.x % a.head_dim, part = threadIdx.x / a.head_dim;
  float accumulator = 0.0f;
  for (int j = part; j < visible; j += parts)
    accumulator += scores[j] * __bfloat162float(values[static_cast<std::size_t>(j) * a.head_dim + column]);
  column_parts[threadIdx.x] = accumulator;
  __syncthreads();
  if (threadIdx.x < a.head_dim) {
    float sum = 0.0f;
    for (int p = 0; p < parts; ++p) sum += column_parts[p * a.head_dim + threadIdx.x];
    a.o[query_row * a.head_dim + threadIdx.x] = __float2bfloat16_rn(sum / total);
  }
}

// The scores of one row live in shared memory: allow the kernel the device's whole opt-in limit.
int shared_limit() {
  static const int limit = [] {
    int device = 0, bytes = 0;
    KGATE_CUDA_CHECK(cudaGetDevice(&device));
    KGATE_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    cudaFuncAttributes attributes{};
    KGATE_CUDA_CHECK(cudaFuncGetAttributes(&attributes, naive_attention_kernel));
    bytes -= static_cast<int>(attributes.sharedSizeBytes);  // the static part: column_parts, block_reduce's exchange
    KGATE_CUDA_CHECK(cudaFuncSetAttribute(naive_attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return bytes;
  }();
  return limit;
}

void launch(const PrefillAttentionArgs& a, cudaStream_t stream) {
  if (a.heads % a.kv_heads != 0)
    throw UnsupportedShape(std::to_string(a.heads) + " query heads do not divide into " + std::to_string(a.kv_heads) + " KV heads");
  if (a.head_dim > kThreads || kThreads % a.head_dim != 0)
    throw UnsupportedShape("head_dim " + std::to_string(a.head_dim) + " does not divide " + std::to_string(kThreads));
  const std::size_t shared = sizeof(float) * (static_cast<std::size_t>(a.head_dim) + a.seq_len);
  if (shared > static_cast<std::size_t>(shared_limit()))
    throw UnsupportedShape("a row of " + std::to_string(a.seq_len) + " fp32 scores exceeds the " + std::to_string(shared_limit()) +
                           " bytes of shared memory a block may use");
  const std::size_t rows = static_cast<std::size_t>(a.batch) * a.heads * a.seq_len;
  if (rows > 0x7fffffffu) throw UnsupportedShape("more than 2^31 - 1 query rows (grid x)");
  naive_attention_kernel<<<static_cast<unsigned>(rows), kThreads, shared, stream>>>(a);
  KGATE_CHECK_LAUNCH();
}

}  // namespace

KGATE_REGISTER_VARIANT(PrefillAttentionFamily, launch,
                       {.name = "naive",
                        .description = "one block per query row: the row's fp32 scores materialized in shared memory, "
                                       "softmax, then P·V; no tiling, K and V read once per row",
                        .role = VariantRole::reference,
                        // ~2.5 TFLOP/s: 40 ms a launch at 1e11 FLOP, and a benchmark launches it about 30
                        // times (both modes, the counter pass); beyond that, seconds that tell nothing new.
                        .max_bench_flops = 1e11});

}  // namespace kgate::kernels
