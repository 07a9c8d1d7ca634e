// The decode step of one decoder layer: every sequence of a batch of b adds one token, attending
// to its l cached keys. The linears are GEMVs (the gemv family's tensor-core variant up to its 16
// rows, cuBLAS beyond), attention reads a contiguous KV cache (decode_attention).
#include "decoder_layer.hpp"

namespace kgate::workloads {
namespace {

class DecodeWorkload final : public Workload {
 public:
  std::string name() const override { return "decode"; }
  std::string description() const override {
    return "one decoder layer's decode step: one new token for each of b sequences with l cached keys each";
  }
  std::vector<WorkloadParameter> parameters() const override {
    return {{"b", "batch", "sequences in the batch, one new token each"}, {"l", "context", "cached keys per sequence"}};
  }
  Shape default_point() const override { return point({{"b", 1}, {"l", 4096}}); }
  std::vector<Shape> bench_points() const override { return {point({{"b", 1}, {"l", 4096}}), point({{"b", 64}, {"l", 4096}})}; }
  std::map<std::string, std::vector<std::int64_t>> default_sweep() const override {
    return {{"b", {1, 8, 64}}, {"l", {1024, 4096, 16384}}};
  }
  std::int64_t tokens(const Shape& point) const override { return point.at("b"); }

  std::vector<WorkloadStep> steps(const ModelConfig& model, const Shape& point) const override {
    const std::int64_t b = point.at("b"), l = point.at("l");
    const Shape attention({{"b", b}, {"hq", model.q_heads}, {"hkv", model.kv_heads}, {"d", model.head_dim}, {"l", l}}, DType::bf16);
    return decoder_layer(model, {.tokens = b,
                                 .linear_preference = {"vectorized", "cublas", "naive"},
                                 .attention = {"attention", "decode_attention", {"splitk", "naive"}, attention}});
  }
};

}  // namespace

KGATE_REGISTER_WORKLOAD(DecodeWorkload);

}  // namespace kgate::workloads
