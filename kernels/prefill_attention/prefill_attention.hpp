#pragma once
// Prefill (self-)attention forward, as FlashAttention computes it:
//   O = softmax(Q·Kᵀ·scale [+ causal mask]) · V,   lse[row] = ln Σ exp(q·k·scale)
// q, o: [batch, heads, seq_len, head_dim]; k, v: [batch, kv_heads, seq_len, head_dim] (GQA: query
// head h reads KV head h / (heads / kv_heads)). Causal masking is top-left aligned: query i sees
// keys 0..i. bf16 in and out, fp32 softmax and accumulation, lse in fp32 (natural log).
// Variants, one file each, in the order of the FlashAttention journey: naive.cu (materializes the
// scores; the large-shape reference), fa1_seqkv.cu, fa2_splitkv.cu, fa2_mma.cu, fa3_wgmma.cu,
// fa3_pingpong.cu.
#include <cuda_bf16.h>

#include "kgate/core/family.hpp"

namespace kgate::kernels {

struct PrefillAttentionArgs {
  const __nv_bfloat16* q;  // [batch, heads, seq_len, head_dim]
  const __nv_bfloat16* k;  // [batch, kv_heads, seq_len, head_dim]
  const __nv_bfloat16* v;  // [batch, kv_heads, seq_len, head_dim]
  __nv_bfloat16* o;        // [batch, heads, seq_len, head_dim]
  float* lse;              // [batch, heads, seq_len]
  // Scratch the family declares for variants that split the keys across blocks (fa2_splitkv):
  // partial outputs [max_splits, batch, heads, seq_len, head_dim] and their lse
  // [max_splits, batch, heads, seq_len]; max_splits is the capacity, a variant may use fewer.
  float* partial_o;
  float* partial_lse;
  int max_splits;
  int batch;
  int heads;
  int kv_heads;  // divides heads
  int seq_len;
  int head_dim;  // 64 or 128
  bool causal;
  float scale;  // 1/sqrt(head_dim)
  // Scratch the family declares for variants whose blocks claim work tiles (fa3_pingpong); last, so
  // that the fields before them keep their offsets in a kernel's parameters.
  // Zeroed: [0] the tiles claimed past the first wave, [1] the blocks done claiming; zero again at exit.
  int* tile_counter;
  // [block][Q buffer], kMaxClaimingBlocks blocks of two: where a block's producer puts the number of
  // the work tile it claimed for the consumers.
  int* tile_slots;
};

// The most blocks of a launch that claims work tiles (one per SM): the size of tile_slots.
inline constexpr int kMaxClaimingBlocks = 1024;

class PrefillAttentionFamily final : public TypedFamily<PrefillAttentionArgs> {
 public:
  static constexpr const char* kName = "prefill_attention";

  KGATE_FAMILY_OVERRIDES();
  bool baseline(const Shape& shape, HostTensors& tensors) const override;
  std::optional<std::string> device_reference(const Shape& shape) const override;
  Tolerance tolerance(const Shape& shape) const override;
};

}  // namespace kgate::kernels
