// Flash-decoding over the paged cache: decode_attention's split-K kernel, with one page-table
// lookup per warp step (a step never crosses a page), fetched one step ahead, the first ones
// beside the sequence's length.
#include "../common/decode_attention.cuh"
#include "decode_attention_paged.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

void launch(const PagedDecodeAttentionArgs& a, cudaStream_t stream) { launch_split_attention(a.attention, a.kv, stream); }

}  // namespace

KGATE_REGISTER_VARIANT(PagedDecodeAttentionFamily, launch,
                       {.name = "splitk",
                        .description = "split-K over the KV length sized to fill whole waves, GQA group per block, 16-byte loads, "
                                       "page-table lookup one step ahead, log-sum-exp merge by the last block to finish",
                        .follows = "naive"});

}  // namespace kgate::kernels
