#pragma once
// The dimensions of a decoder-only transformer that a workload derives its kernel shapes from
// (workloads/models.cpp declares them). A results file carries the configuration a workload
// benchmark ran with, so a story read later tells what was measured, not what is declared now.
#include <cstdint>
#include <string>

namespace kgate {

struct ModelConfig {
  std::string name;          // "llama3-8b": lower case, part of benchmark names
  std::string display_name;  // "Llama-3-8B"
  std::int64_t hidden = 0;
  std::int64_t q_heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t intermediate = 0;  // the MLP's width (gate and up each project to it)
  std::int64_t layers = 0;
  std::int64_t max_position = 0;  // rows of the rotary cos/sin cache

  // Output features of the fused QKV projection: the query heads, then one K and one V per KV head.
  std::int64_t qkv_features() const { return (q_heads + 2 * kv_heads) * head_dim; }
};

}  // namespace kgate
