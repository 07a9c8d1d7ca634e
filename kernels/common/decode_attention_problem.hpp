#pragma once
// The host side shared by the contiguous and paged decode-attention families: shapes, sequence
// lengths, bytes/FLOP models, the fp64 reference and the tolerance. One query token per sequence
// attends to its sequence's cached keys and values (GQA: query head h reads KV head h / group),
// scale 1/sqrt(d):  out[b, h] = softmax_j(q[b, h]·k[b, j] / sqrt(d)) · v[b, j],  j < length[b].
#include <cstdint>
#include <functional>
#include <vector>

#include "decode_attention_args.hpp"
#include "kgate/core/accuracy.hpp"
#include "kgate/base/shape.hpp"
#include "kgate/core/tensor.hpp"

namespace kgate::kernels {

struct AttentionDims {
  std::int64_t batch, q_heads, kv_heads, head_dim;
  std::int64_t max_len;  // the cache's capacity per sequence, and the first sequence's length
  std::int64_t min_len;  // the other sequences' lengths lie in [min_len, max_len]
  float query_max;       // the queries' largest magnitude (query_distribution)

  static AttentionDims of(const Shape& shape);
  std::int64_t group() const { return q_heads / kv_heads; }
};

// The launch arguments both layouts share, from the positions of the shared tensors in the
// family's own declaration order.
struct AttentionTensorIndices {
  std::size_t q, lengths, out, partial_out, partial_lse, arrivals;
};
AttentionArgs attention_args(const AttentionDims& dims, const TensorViews& views, const AttentionTensorIndices& at);

// Dimensions b, hq, hkv, d, l (max length); when the batch is ragged, l_min; and, for a test of
// sharply peaked scores, q_max (the queries' largest magnitude, kQueryMax by default).
std::vector<Shape> decode_attention_test_shapes();
std::vector<Shape> decode_attention_bench_shapes();

// The lengths are a function of the shape, not of the seed, so that min_bytes and flops (functions
// of the shape) count exactly the keys a launch reads. Sequence 0 has max_len keys; the others a
// spread of lengths in [min_len, max_len], mostly not multiples of any tile or split.
std::vector<std::int64_t> sequence_lengths(const AttentionDims& dims);
std::int64_t total_length(const AttentionDims& dims);
CustomInit lengths_init(const AttentionDims& dims);

// Queries larger than keys (|q| up to 4): scores spread over several units, so the softmax is
// peaked enough that the running maximum matters.
inline constexpr float kQueryMax = 4.0f;
Distribution query_distribution(float max_magnitude = kQueryMax);

// The tensors both layouts declare around their KV cache.
TensorSpec query_spec(const AttentionDims& dims);
TensorSpec lengths_spec(const AttentionDims& dims);
TensorSpec output_spec(const AttentionDims& dims);
// The split kernels' workspace: partial outputs and log-sum-exps (scratch), and one arrival
// counter per (sequence, KV head) (zeroed scratch).
std::vector<TensorSpec> split_scratch_specs(const AttentionDims& dims);

// K and V rows of every key read once, q read and out written once, the lengths read once.
double attention_core_bytes(const AttentionDims& dims);
// q·k and p·v: 2·d multiply-adds per (query head, key); the softmax's few operations per score
// are not counted.
double attention_flops(const AttentionDims& dims);

Tolerance attention_tolerance();

// Element offset of the row of (sequence, KV head, key) in the host copies of k and v.
using KvRowLocator = std::function<std::size_t(std::int64_t b, std::int64_t kv_head, std::int64_t key)>;

void attention_reference(const AttentionDims& dims, const std::vector<double>& q, const std::vector<double>& k,
                         const std::vector<double>& v, const std::vector<double>& lengths, const KvRowLocator& row,
                         std::vector<double>& out);

}  // namespace kgate::kernels
