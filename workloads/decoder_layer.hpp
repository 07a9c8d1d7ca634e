#pragma once
// One Llama-style decoder layer as kernel steps, shared by the decode and prefill workloads, which
// differ in how many tokens pass through it, how its linear layers are run and which attention:
//   input RMSNorm -> fused QKV projection -> RoPE on q and k -> attention -> output projection ->
//   residual add + RMSNorm -> fused gate/up projection -> SiLU-and-mul -> down projection
// The shapes follow the families' conventions (kernels/*/family.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "kgate/base/workload.hpp"

namespace kgate::workloads {

struct LayerPlan {
  std::int64_t tokens;                         // rows through the norms, the linears and RoPE
  std::vector<std::string> linear_preference;  // variants of the gemv family for the four linears
  WorkloadStep attention;
};

std::vector<WorkloadStep> decoder_layer(const ModelConfig& model, const LayerPlan& plan);

}  // namespace kgate::workloads
