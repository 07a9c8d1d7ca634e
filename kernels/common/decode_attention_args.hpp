#pragma once
// Decode attention's launch arguments, KV-cache layouts and split plan, shared by the contiguous
// and paged families and their variants. Host-and-device code only (no kernels), so the CPU tests
// check the split plan that the kernels use.
#include <cuda_bf16.h>

#include <cstddef>
#include <cstdint>

#include "kgate/base/random.hpp"

namespace kgate::kernels {

struct AttentionArgs {
  const __nv_bfloat16* q;       // [batch, q_heads, head_dim]
  const std::int32_t* lengths;  // [batch], each in [1, max_len]
  __nv_bfloat16* out;           // [batch, q_heads, head_dim]
  float* partial_out;           // scratch [batch, q_heads, pieces, head_dim], pieces ≤ max_splits
  float* partial_lse;           // scratch [batch, q_heads, pieces]: log2 of each piece's softmax sum
  int* arrivals;                // zeroed scratch [batch, kv_heads]: pieces finished, reset by the last
  int batch;
  int q_heads;
  int kv_heads;  // divides q_heads; query head h reads KV head h / (q_heads / kv_heads)
  int head_dim;
  int max_len;
  int max_splits;  // the scratch capacity the family declared
};

// A layout locates a key's K/V row through a cursor for one (sequence, KV head), which holds
// what the lookups of that pair share: cursor(b, kv_head).row(key) is the row's element offset.
// kRowsToMaxLen says whether the rows of keys past a sequence's length, up to max_len, may be
// read (their values never reach an output), so that a kernel can start its reads before it knows
// the length.

// k, v: [batch, kv_heads, max_len, head_dim].
struct ContiguousKv {
  static constexpr bool kRowsToMaxLen = true;  // every sequence owns max_len rows
  const __nv_bfloat16* k;
  const __nv_bfloat16* v;
  int kv_heads;
  int max_len;
  int head_dim;

  struct Cursor {
    std::size_t first_row;
    int head_dim;
    // Consecutive keys are consecutive rows.
    KGATE_HD std::size_t row(int key) const { return first_row + static_cast<std::size_t>(key) * head_dim; }
  };
  KGATE_HD Cursor cursor(int b, int kv_head) const {
    return {(static_cast<std::size_t>(b) * kv_heads + kv_head) * max_len * head_dim, head_dim};
  }
};

inline constexpr int kPageSize = 16;  // keys per page, as vLLM's default block size

// k, v: [num_pages, kv_heads, kPageSize, head_dim]; key j of sequence b lives in page
// page_table[b, j / kPageSize], at row j % kPageSize.
struct PagedKv {
  // Page-table entries past a sequence's length may name any page, or none: only the entries
  // themselves may be read there.
  static constexpr bool kRowsToMaxLen = false;
  const __nv_bfloat16* k;
  const __nv_bfloat16* v;
  const std::int32_t* page_table;  // [batch, max_pages]
  int kv_heads;
  int max_pages;
  int head_dim;

  struct Cursor {
    const std::int32_t* pages;  // the sequence's row of the page table
    std::size_t page_stride;    // elements per page (all KV heads)
    int head_offset;            // the KV head's first row within a page
    int head_dim;
    // Consecutive keys within one page are consecutive rows.
    KGATE_HD std::size_t row(int key) const {
      return static_cast<std::size_t>(pages[key / kPageSize]) * page_stride + head_offset + (key % kPageSize) * head_dim;
    }
  };
  KGATE_HD Cursor cursor(int b, int kv_head) const {
    return {page_table + static_cast<std::size_t>(b) * max_pages, static_cast<std::size_t>(kv_heads) * kPageSize * head_dim,
            kv_head * kPageSize * head_dim, head_dim};
  }
};

// Split-K over the KV length (flash-decoding). The longest sequence's keys (max_len) are cut into
// `splits` pieces of equal length, rounded up to kSplitQuantum keys — so that a piece is worth its
// fixed cost (one partial output and its merge) and every piece starts on a page and warp-tile
// boundary. Every sequence is cut at the same keys, so that a block knows its keys before it reads
// its sequence's length; a shorter sequence uses fewer pieces.
inline constexpr int kSplitQuantum = 64;
// Bounds the device's resident blocks (SMs × blocks per SM) in planning, so that the family can
// size the scratch before the device is known (132 SMs × 3-6 blocks on an H100/H200).
inline constexpr std::int64_t kMaxResidentBlocks = 2048;
// A plan is good enough once its blocks fill this share of the waves they occupy.
inline constexpr double kTargetWaveFill = 0.9;

// The keys of one piece when `length` keys are cut into `splits` pieces.
KGATE_HD inline int split_length(int length, int splits) {
  const int even = (length + splits - 1) / splits;
  return ((even > 0 ? even : 1) + kSplitQuantum - 1) / kSplitQuantum * kSplitQuantum;
}

// The pieces of `piece` keys that hold a sequence of `length` keys.
KGATE_HD inline int pieces_of(int length, int piece) { return (length + piece - 1) / piece; }

// The pieces that `length` keys cut into `splits` pieces actually fill (rounding up the piece
// length can leave the last few empty).
KGATE_HD inline int used_splits(int length, int splits) { return pieces_of(length, split_length(length, splits)); }

// The most splits a plan considers: enough for four waves' worth of blocks. It sizes the scratch.
inline int split_limit(std::int64_t batch_kv_heads, std::int64_t max_len, std::int64_t resident_blocks) {
  const std::int64_t resident = resident_blocks < kMaxResidentBlocks ? resident_blocks : kMaxResidentBlocks;
  const std::int64_t by_waves = 4 * ((resident + batch_kv_heads - 1) / batch_kv_heads);
  const std::int64_t by_length = (max_len + kSplitQuantum - 1) / kSplitQuantum;
  return static_cast<int>(by_waves < by_length ? by_waves : by_length);
}

// The fewest splits whose blocks (at full length) fill kTargetWaveFill of the waves they occupy
// (resident_blocks per wave), or failing that the best-filling count. Memory-bound blocks need
// company: a last wave of few blocks, or one wave with few blocks per SM, leaves bandwidth unused.
inline int plan_splits(std::int64_t batch_kv_heads, std::int64_t max_len, std::int64_t resident_blocks) {
  const std::int64_t resident = resident_blocks < kMaxResidentBlocks ? resident_blocks : kMaxResidentBlocks;
  int best = 1;
  double best_fill = 0;
  for (int splits = 1; splits <= split_limit(batch_kv_heads, max_len, resident); ++splits) {
    const std::int64_t blocks = batch_kv_heads * used_splits(static_cast<int>(max_len), splits);
    const std::int64_t waves = (blocks + resident - 1) / resident;
    const double fill = static_cast<double>(blocks) / static_cast<double>(waves * resident);
    if (fill >= kTargetWaveFill) return splits;
    if (fill > best_fill) best = splits, best_fill = fill;
  }
  return best;
}

// The splits a launch uses: half of plan_splits' (rounded up), so each block streams a piece twice
// as long, with half the blocks per SM that fill the device. Fewer pieces mean fewer partial
// outputs written and merged, and less of each block's prologue (q, the first ring steps) per key.
// From a sweep on an H100 (cuDNN's time / split-K's, contiguous and paged, 16 shapes) of 1/4, 1/2,
// 1 and 2 times the plan: 1.005x geomean at half against 0.980x at the plan, 0.972x at a quarter
// and 0.949x at twice; at batch 1 (8 KV heads) 1.01-1.25x against 0.97-1.07x, at batch 16 with 8
// KV heads 0.94-0.96x against 0.93-0.95x; the larger batches, whose plan is one piece, unchanged.
inline int launch_splits(std::int64_t batch_kv_heads, std::int64_t max_len, std::int64_t resident_blocks) {
  return (plan_splits(batch_kv_heads, max_len, resident_blocks) + 1) / 2;
}

// The most splits any device gets: the size of the family's scratch.
inline int max_splits(std::int64_t batch_kv_heads, std::int64_t max_len) {
  return split_limit(batch_kv_heads, max_len, kMaxResidentBlocks);
}

}  // namespace kgate::kernels
