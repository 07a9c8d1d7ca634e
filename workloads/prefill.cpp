// The prefill step of one decoder layer: b prompts of p tokens each go through the layer at once.
// The linears are GEMMs of b·p rows (the gemv family's cuBLAS variant, a general GEMM), attention
// is causal self-attention over the prompt (prefill_attention).
#include "decoder_layer.hpp"

namespace kgate::workloads {
namespace {

class PrefillWorkload final : public Workload {
 public:
  std::string name() const override { return "prefill"; }
  std::string description() const override {
    return "one decoder layer's prefill step: b prompts of p tokens each, causal self-attention over the prompt";
  }
  std::vector<WorkloadParameter> parameters() const override {
    return {{"b", "batch", "prompts in the batch"}, {"p", "prompt", "tokens per prompt"}};
  }
  Shape default_point() const override { return point({{"b", 1}, {"p", 2048}}); }
  std::vector<Shape> bench_points() const override { return {point({{"b", 1}, {"p", 2048}})}; }
  std::map<std::string, std::vector<std::int64_t>> default_sweep() const override { return {{"b", {1}}, {"p", {512, 2048, 8192}}}; }
  std::int64_t tokens(const Shape& point) const override { return point.at("b") * point.at("p"); }

  std::vector<WorkloadStep> steps(const ModelConfig& model, const Shape& point) const override {
    const std::int64_t b = point.at("b"), p = point.at("p");
    const Shape attention({{"b", b}, {"h", model.q_heads}, {"hkv", model.kv_heads}, {"s", p}, {"d", model.head_dim}, {"causal", 1}},
                          DType::bf16);
    return decoder_layer(model, {.tokens = b * p,
                                 .linear_preference = {"cublas"},
                                 .attention = {"attention",
                                               "prefill_attention",
                                               {"fa3_pingpong", "fa3_wgmma", "fa2_mma", "fa2_splitkv", "fa1_seqkv", "naive"},
                                               attention}});
  }
};

}  // namespace

KGATE_REGISTER_WORKLOAD(PrefillWorkload);

}  // namespace kgate::workloads
