// Flash-decoding: the KV length split across blocks (half the fewest splits whose blocks fill
// whole waves of the device: pieces twice as long, and batch 1 still covers every SM), each block
// serving a whole GQA group from one read of its K/V rows with 16-byte loads, its first reads
// issued before the sequence's length arrives; the last block of a (sequence, KV head) to finish
// merges its pieces, in one launch (../common/decode_attention.cuh).
#include "../common/decode_attention.cuh"
#include "decode_attention.hpp"
#include "kgate/core/registry.hpp"

namespace kgate::kernels {
namespace {

void launch(const DecodeAttentionArgs& a, cudaStream_t stream) { launch_split_attention(a.attention, a.kv, stream); }

}  // namespace

KGATE_REGISTER_VARIANT(DecodeAttentionFamily, launch,
                       {.name = "splitk",
                        .description = "split-K over the KV length sized to fill whole waves, GQA group per block, 16-byte loads, "
                                       "log-sum-exp merge by the last block to finish",
                        .follows = "naive"});

}  // namespace kgate::kernels
