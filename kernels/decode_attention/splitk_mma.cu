// splitk on the tensor cores: each warp takes 16 keys a step, S = Q·Kᵀ and P·V by mma.sync with
// the GQA group's queries as the A rows, K and V through a swizzled three-stage cp.async ring per
// warp, read by ldmatrix; the pieces and their merge are splitk's
// (../common/decode_attention_mma.cuh says why: on an H200 splitk was bound by instruction issue).
#include "../common/decode_attention_mma.cuh"
#include "decode_attention.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

void launch(const DecodeAttentionArgs& a, cudaStream_t stream) { launch_mma_attention(a.attention, a.kv, stream); }

}  // namespace

KGATE_REGISTER_VARIANT(DecodeAttentionFamily, launch,
                       {.name = "splitk_mma",
                        .description = "splitk on the tensor cores: 16-key warp steps, QK^T and PV by mma.sync with the GQA "
                                       "group as the A rows, K and V by a swizzled cp.async ring and ldmatrix",
                        .min_compute_capability = 80,
                        .follows = "splitk"});

}  // namespace kgate::kernels
