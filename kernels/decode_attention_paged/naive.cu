// The straightforward paged decode attention: decode_attention's naive kernel reading every key's
// row through the page table. The family's reference variant.
#include "../common/decode_attention.cuh"
#include "decode_attention_paged.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

void launch(const PagedDecodeAttentionArgs& a, cudaStream_t stream) { launch_naive_attention(a.attention, a.kv, stream); }

}  // namespace

KGATE_REGISTER_VARIANT(PagedDecodeAttentionFamily, launch,
                       {.name = "naive",
                        .description = "one warp per (sequence, query head), sequential keys through the page table, "
                                       "online softmax, scalar loads",
                        .role = VariantRole::reference});

}  // namespace kgate::kernels
