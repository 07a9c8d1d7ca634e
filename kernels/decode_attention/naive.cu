// The straightforward decode attention: one warp per (sequence, query head), keys one after
// another with an online softmax in natural-base expf, scalar loads; GQA by indexing, so each KV
// head is read once per query head. The family's reference variant.
#include "../common/decode_attention.cuh"
#include "decode_attention.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

void launch(const DecodeAttentionArgs& a, cudaStream_t stream) { launch_naive_attention(a.attention, a.kv, stream); }

}  // namespace

KGATE_REGISTER_VARIANT(DecodeAttentionFamily, launch,
                       {.name = "naive",
                        .description = "one warp per (sequence, query head), sequential keys, online softmax, scalar loads",
                        .role = VariantRole::reference});

}  // namespace kgate::kernels
