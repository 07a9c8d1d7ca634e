// The model configurations workloads derive their shapes from, one registration each. Values from
// the models' published config.json (hidden_size, num_attention_heads, num_key_value_heads,
// head_dim, intermediate_size, num_hidden_layers, max_position_embeddings of Llama-3.1).
#include "kgate/base/workload.hpp"

KGATE_REGISTER_MODEL({.name = "llama3-8b",
                      .display_name = "Llama-3-8B",
                      .hidden = 4096,
                      .q_heads = 32,
                      .kv_heads = 8,
                      .head_dim = 128,
                      .intermediate = 14336,
                      .layers = 32,
                      .max_position = 131072});

KGATE_REGISTER_MODEL({.name = "llama3-70b",
                      .display_name = "Llama-3-70B",
                      .hidden = 8192,
                      .q_heads = 64,
                      .kv_heads = 8,
                      .head_dim = 128,
                      .intermediate = 28672,
                      .layers = 80,
                      .max_position = 131072});
