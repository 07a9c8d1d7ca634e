#pragma once
// fa2_splitkv's work decomposition, shared with the family (which sizes the scratch for it) and
// the CPU tests: query tiles of kTileRows rows, key tiles of kTileKeys keys, and each query tile's
// keys cut into `splits` pieces of whole key tiles that different blocks process in parallel.
// Host-and-device code only (no kernels).
#include <cstdint>

#include "../common/decode_attention_args.hpp"  // kMaxResidentBlocks, KGATE_HD

namespace kgate::kernels::prefill {

inline constexpr int kTileRows = 64;
inline constexpr int kTileKeys = 64;  // equal to kTileRows: a causal query tile's keys end in its own key tile

KGATE_HD inline int ceil_div(std::int64_t a, std::int64_t b) { return static_cast<int>((a + b - 1) / b); }

KGATE_HD inline int query_tiles(int seq_len) { return ceil_div(seq_len, kTileRows); }

// Key tiles query tile `tile` attends to: all of them, or with the causal mask those up to and
// including the diagonal one (the tiles entirely above the diagonal are skipped).
KGATE_HD inline int key_tiles(int seq_len, bool causal, int tile) {
  const int all = ceil_div(seq_len, kTileKeys);
  return causal && tile + 1 < all ? tile + 1 : all;
}

// Key tiles per piece and the pieces query tile `tile` uses (fewer than `splits` when it has
// fewer key tiles than that): piece p covers key tiles [p * per_piece, min((p + 1) * per_piece, key_tiles)).
KGATE_HD inline int tiles_per_piece(int seq_len, bool causal, int tile, int splits) {
  return ceil_div(key_tiles(seq_len, causal, tile), splits);
}
KGATE_HD inline int used_pieces(int seq_len, bool causal, int tile, int splits) {
  return ceil_div(key_tiles(seq_len, causal, tile), tiles_per_piece(seq_len, causal, tile, splits));
}

// Splits for a launch of `base_blocks` = batch × heads × query tiles blocks on a device holding
// `resident_blocks` of them at once: 1 when the grid fills a wave already (more blocks would only
// add partial outputs to merge), otherwise enough to fill one wave, at most one per key tile.
// Never decreases with resident_blocks, so the plan for kMaxResidentBlocks bounds every device's.
inline int plan_splits(std::int64_t base_blocks, int seq_len, std::int64_t resident_blocks) {
  const std::int64_t resident = resident_blocks < kMaxResidentBlocks ? resident_blocks : kMaxResidentBlocks;
  if (base_blocks >= resident) return 1;
  const int wave = ceil_div(resident, base_blocks);
  const int tiles = ceil_div(seq_len, kTileKeys);
  return wave < tiles ? wave : tiles;
}

// The scratch capacity the family declares: the most splits any device plans.
inline int max_splits(std::int64_t base_blocks, int seq_len) { return plan_splits(base_blocks, seq_len, kMaxResidentBlocks); }

}  // namespace kgate::kernels::prefill
