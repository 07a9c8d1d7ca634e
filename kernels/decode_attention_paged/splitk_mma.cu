// splitk_mma over the paged cache: a warp step is one 16-key page, its page-table entry read two
// steps ahead (../common/decode_attention_mma.cuh).
#include "../common/decode_attention_mma.cuh"
#include "decode_attention_paged.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

void launch(const PagedDecodeAttentionArgs& a, cudaStream_t stream) { launch_mma_attention(a.attention, a.kv, stream); }

}  // namespace

KGATE_REGISTER_VARIANT(PagedDecodeAttentionFamily, launch,
                       {.name = "splitk_mma",
                        .description = "splitk on the tensor cores: one page per 16-key warp step, QK^T and PV by mma.sync "
                                       "with the GQA group as the A rows, K and V by a swizzled cp.async ring and ldmatrix",
                        .min_compute_capability = 80,
                        .follows = "splitk"});

}  // namespace kgate::kernels
