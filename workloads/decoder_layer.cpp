#include "decoder_layer.hpp"

namespace kgate::workloads {
namespace {

// Each family's variants, fastest first (H100 sweeps: docs/peers.md); the naive variants stay as
// the last resort of a device or shape the others refuse.
const std::vector<std::string> kNorm = {"weight_first", "vectorized", "naive"};
const std::vector<std::string> kRope = {"token_block", "vectorized", "naive"};
const std::vector<std::string> kSiluAndMul = {"flat", "vectorized", "naive"};

Shape rows(std::int64_t m, std::int64_t n) { return Shape({{"m", m}, {"n", n}}, DType::bf16); }

// y[m, n] = x[m, k] · W[n, k]ᵀ: the gemv family's problem, a linear layer of n outputs.
Shape linear(std::int64_t m, std::int64_t n, std::int64_t k) { return Shape({{"m", m}, {"n", n}, {"k", k}}, DType::bf16); }

}  // namespace

std::vector<WorkloadStep> decoder_layer(const ModelConfig& model, const LayerPlan& plan) {
  const std::int64_t t = plan.tokens;
  const Shape rope({{"t", t}, {"hq", model.q_heads}, {"hk", model.kv_heads}, {"d", model.head_dim}, {"max_pos", model.max_position}},
                   DType::bf16);
  return {
      {"input_norm", "rmsnorm", kNorm, rows(t, model.hidden)},
      {"qkv_proj", "gemv", plan.linear_preference, linear(t, model.qkv_features(), model.hidden)},
      {"rope", "rope", kRope, rope},
      plan.attention,
      {"o_proj", "gemv", plan.linear_preference, linear(t, model.hidden, model.q_heads * model.head_dim)},
      {"post_attention_norm", "fused_add_rmsnorm", kNorm, rows(t, model.hidden)},
      {"gate_up_proj", "gemv", plan.linear_preference, linear(t, 2 * model.intermediate, model.hidden)},
      {"silu_and_mul", "silu_and_mul", kSiluAndMul, Shape({{"m", t}, {"i", model.intermediate}}, DType::bf16)},
      {"down_proj", "gemv", plan.linear_preference, linear(t, model.hidden, model.intermediate)},
  };
}

}  // namespace kgate::workloads
