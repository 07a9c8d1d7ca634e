#pragma once
// Decode-attention kernels, written once over a KV-cache layout (ContiguousKv or PagedKv, whose
// cursors both answer "where is the row of this key"), so the contiguous and paged families run
// the same code. Scores and the softmax are fp32 throughout; only the output is rounded to bf16.
#include <cuda_bf16.h>

#include <stdexcept>
#include <string>

#include "block_reduce.cuh"
#include "decode_attention_args.hpp"
#include "decode_attention_merge.cuh"
#include "kgate/core/family.hpp"
#include "launch_limits.hpp"
#include "packed.cuh"
#include "row_vectors.cuh"

namespace kgate::kernels {

// ---- naive: one warp per (sequence, query head), every key in turn, online softmax -------------

inline constexpr int kNaiveMaxHeadDim = 256;  // head_dim / 32 values per lane

template <class Kv>
__global__ void __launch_bounds__(32) attention_naive_kernel(AttentionArgs a, Kv kv) {
  constexpr int kPerLane = kNaiveMaxHeadDim / 32;
  const int b = blockIdx.x / a.q_heads, head = blockIdx.x % a.q_heads;
  const int kv_head = head / (a.q_heads / a.kv_heads);
  const std::size_t at = static_cast<std::size_t>(blockIdx.x) * a.head_dim;
  const float scale = 1.0f / sqrtf(static_cast<float>(a.head_dim));

  float q[kPerLane], acc[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int e = threadIdx.x + 32 * i;
    q[i] = e < a.head_dim ? __bfloat162float(a.q[at + e]) : 0.0f;
    acc[i] = 0.0f;
  }
  float running_max = -INFINITY, total = 0.0f;
  const int length = a.lengths[b];
  const auto keys = kv.cursor(b, kv_head);
  for (int key = 0; key < length; ++key) {
    const std::size_t row = keys.row(key);
    float dot = 0.0f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int e = threadIdx.x + 32 * i;
      if (e < a.head_dim) dot += q[i] * __bfloat162float(kv.k[row + e]);
    }
    const float score = warp_sum(dot) * scale;
    const float new_max = fmaxf(running_max, score);
    const float correction = expf(running_max - new_max);  // 0 at the first key
    const float weight = expf(score - new_max);
    total = total * correction + weight;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int e = threadIdx.x + 32 * i;
      if (e < a.head_dim) acc[i] = acc[i] * correction + weight * __bfloat162float(kv.v[row + e]);
    }
    running_max = new_max;
  }
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int e = threadIdx.x + 32 * i;
    if (e < a.head_dim) a.out[at + e] = __float2bfloat16_rn(acc[i] / total);
  }
}

inline void require_whole_groups(const AttentionArgs& a) {
  if (a.q_heads % a.kv_heads != 0)
    throw UnsupportedShape(std::to_string(a.q_heads) + " query heads do not divide into " + std::to_string(a.kv_heads) + " KV heads");
}

template <class Kv>
void launch_naive_attention(const AttentionArgs& a, const Kv& kv, cudaStream_t stream) {
  require_whole_groups(a);
  if (a.head_dim > kNaiveMaxHeadDim) throw UnsupportedShape("head_dim above 256");
  attention_naive_kernel<Kv><<<a.batch * a.q_heads, 32, 0, stream>>>(a, kv);
  KGATE_CHECK_LAUNCH();
}

// ---- split-K (flash-decoding) ------------------------------------------------------------------
//
// Block (piece, KV head, sequence) attends every query head of the KV head's GQA group to one
// piece of the sequence, so each K/V row is read from memory once for the whole group. A key's
// row is spread over D/8 lanes, 16 bytes each; a warp step takes kLoads rows of K and of V per lane
// and the 4 warps interleave their steps over the piece. The rows travel by asynchronous copies
// into a ring of kSplitStages steps per warp in shared memory, so a warp has the next
// kSplitStages - 1 steps in flight while it computes one (with rows loaded into registers, each
// step's loads waited out its arithmetic: 81% of the read ceiling at batch 64, and ptxas sinks
// plain loads below MUFU-heavy code anyway). The partial dot products meet by a reduce-scatter
// within each key's lanes, each lane exponentiates the few scores it ends up holding, and the
// weights are gathered back (with a full xor-reduction of every score in every lane, the SMs issued
// an instruction in 75-78% of their cycles at batch 64-256; now 65-67%, and 1-3% faster on the
// paged cache); each group of lanes that shares a key slot keeps its own online-softmax state
// (base 2: q is pre-scaled by log2(e)/sqrt(d)), and the block merges its states in shared memory,
// in the space the ring used.
//
// The pieces are cut from the longest sequence (decode_attention_args.hpp), so a block knows its
// keys before it knows its sequence's length: the contiguous cache's first copies, and q, are
// issued while the length is still in flight (the cache holds max_len rows per sequence; rows
// past the length are zeroed in the ring before use, since a zero weight would not cancel a NaN
// there), and the paged cache's first page-table reads go out beside it. With every block
// starting at once at batch 1, that is a memory round trip less before the device streams.
//
// A sequence of one piece is written directly. Otherwise each block writes its normalized partial
// output and log2-sum-exp and counts itself in the (sequence, KV head)'s arrival counter; the
// block that completes the count resets it for the next launch and merges the pieces in piece
// order (decode_attention_merge.cuh), so the result does not depend on which block that is. One
// launch: a second, merging kernel cost its launch gap and its own latency chain, about 3 µs of
// 46 at batch 1 and 32K keys; the counter is zeroed scratch (kgate/core/tensor.hpp), so the launch
// needs no memset and stays capturable into a CUDA graph.

inline constexpr int kSplitWarps = 4;
inline constexpr int kSplitThreads = 32 * kSplitWarps;
// Three steps in the ring (24 KiB per block at d 128): in a sweep on an H100, three steps with the
// 256-byte L2 fetch were the fastest at 14 of the 16 bench shapes, ahead of four steps with or
// without it and of five.
inline constexpr int kSplitStages = 3;
// How far (log2 units) a score may pass the reference its weight is taken against before the
// reference is raised: weights stay below 2^8, far from fp32's range.
inline constexpr float kRescaleSlack = 8.0f;

// Reduce-scatter of the V partial scores a lane holds (x[v], v = h·kLoads + r) over the L lanes
// of a key: at each of the first log2(V) xor-levels a lane keeps half its values and sends the other
// half, so the V sums cost V shuffles and additions instead of V·log2(L); any levels left reduce
// the one value still held. Afterwards x[0, V/L) (one value when V ≤ L) holds the complete sums of
// values owned_first(part) onwards. N: values still held; O: the level's xor offset.
template <int V, int N, int O>
__device__ __forceinline__ void reduce_scatter(float (&x)[V], int part) {
  if constexpr (O >= 1) {
    if constexpr (N > 1) {
      const bool upper = part & O;
#pragma unroll
      for (int i = 0; i < N / 2; ++i) {
        const float keep = upper ? x[i + N / 2] : x[i], send = upper ? x[i] : x[i + N / 2];
        x[i] = keep + __shfl_xor_sync(0xffffffffu, send, O);
      }
      reduce_scatter<V, N / 2, O / 2>(x, part);
    } else {
      x[0] += __shfl_xor_sync(0xffffffffu, x[0], O);
      reduce_scatter<V, 1, O / 2>(x, part);
    }
  }
}
// The first of the values lane `part` of a key holds after reduce_scatter<V, N, O>.
template <int N, int O>
__device__ __forceinline__ int owned_first(int part) {
  if constexpr (O >= 1 && N > 1) return (part & O ? N / 2 : 0) + owned_first<N / 2, O / 2>(part);
  return 0;
}
// A lane of a key (its part) that holds value v after reduce_scatter<V, N, O>.
template <int N, int O>
__host__ __device__ constexpr int owner_part(int v) {
  if constexpr (O >= 1 && N > 1) return (v >= N / 2 ? O : 0) + owner_part<N / 2, O / 2>(v >= N / 2 ? v - N / 2 : v);
  return 0;
}

template <int D, int G>
struct SplitTile {
  static constexpr int kLanesPerKey = D / 8;
  static constexpr int kKeysPerLoad = 32 / kLanesPerKey;
  static constexpr int kLoads = 2;                     // K and V rows per lane and warp step
  static constexpr int kKeys = kLoads * kKeysPerLoad;  // keys per warp step
  static constexpr int kStride = kSplitWarps * kKeys;  // keys per block step
  static constexpr int kStates = kSplitWarps * kKeysPerLoad;
  // [stage][load][K or V][thread], 16 bytes each; then, after the loop, [state][head][D] floats.
  static constexpr std::size_t kRingBytes = std::size_t{kSplitStages} * kLoads * 2 * kSplitThreads * 16;
  static constexpr std::size_t kStateBytes = std::size_t{kStates} * G * D * sizeof(float);
  static constexpr std::size_t kSharedBytes = kRingBytes > kStateBytes ? kRingBytes : kStateBytes;
  // A warp step never crosses a page, and the block's steps tile a piece exactly.
  static_assert(kPageSize % kKeys == 0 && kSplitQuantum % kStride == 0);
  // The block merges its states with one warp per head, a lane per state.
  static_assert(kStates <= 32);
  // The completing block's merge exchanges 24 bytes per thread through the same space.
  static_assert(kSharedBytes >= kSplitThreads * 24);
};

template <class Kv, int D, int G>
__global__ void __launch_bounds__(kSplitThreads) attention_split_kernel(AttentionArgs a, Kv kv, int piece, int pieces) {
  using Tile = SplitTile<D, G>;
  __shared__ __align__(16) unsigned char shared[Tile::kSharedBytes];
  // Each thread reads back only the ring slots its own copies filled: no barrier in the loop.
  auto& ring = *reinterpret_cast<uint4(*)[kSplitStages][Tile::kLoads][2][kSplitThreads]>(shared);

  const int split = blockIdx.x, kv_head = blockIdx.y, b = blockIdx.z;
  const int length = a.lengths[b];  // waited for only where the code below needs it
  const int begin = split * piece;
  const int stop = min(a.max_len, begin + piece);  // the piece's end in a sequence of max_len keys

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int slot = lane / Tile::kLanesPerKey, part = lane % Tile::kLanesPerKey;
  const auto keys = kv.cursor(b, kv_head);
  // The warp's step j covers keys warp_begin + j·kStride + [0, kKeys).
  const int warp_begin = begin + warp * Tile::kKeys;

  // Row of step j's first key (a page-table read when paged; none past the piece), independent of
  // the length.
  auto row_of = [&](int j) -> std::size_t {
    const int first = warp_begin + j * Tile::kStride;
    return first < stop ? keys.row(first) : 0;
  };
  // Issues step j's copies as one group; keys from `limit` on (whole steps past the warp's last
  // included) are zero-filled without reading.
  auto fetch = [&](int j, std::size_t row, int limit) {
    const int first = warp_begin + j * Tile::kStride, stage = j % kSplitStages;
#pragma unroll
    for (int r = 0; r < Tile::kLoads; ++r) {
      const int offset = r * Tile::kKeysPerLoad + slot;
      const bool valid = first + offset < limit;
      const std::size_t at = valid ? row + static_cast<std::size_t>(offset) * D + part * 8 : 0;
      copy_16B_async<true>(&ring[stage][r][0][threadIdx.x], kv.k + at, valid);
      copy_16B_async<true>(&ring[stage][r][1][threadIdx.x], kv.v + at, valid);
    }
    commit_async_copies();
  };
  std::size_t rows[kSplitStages - 1];
#pragma unroll
  for (int j = 0; j < kSplitStages - 1; ++j) rows[j] = row_of(j);
  if constexpr (Kv::kRowsToMaxLen) {
#pragma unroll
    for (int j = 0; j < kSplitStages - 1; ++j) fetch(j, rows[j], stop);
  }
  // Nor does q depend on the length.
  float q[G][8];
#pragma unroll
  for (int h = 0; h < G; ++h) load_floats<8>(a.q + (static_cast<std::size_t>(b) * a.q_heads + kv_head * G + h) * D, part, q[h]);
  if (begin >= length) {  // a short sequence needs fewer pieces; the whole block leaves
    wait_async_copies<0>();
    return;
  }
  const int end = min(length, stop);
  if constexpr (!Kv::kRowsToMaxLen) {
#pragma unroll
    for (int j = 0; j < kSplitStages - 1; ++j) fetch(j, rows[j], end);
  }
  const int steps = warp_begin < end ? (end - warp_begin + Tile::kStride - 1) / Tile::kStride : 0;
  std::size_t row_ahead = row_of(kSplitStages - 1);

  const float q_scale = 1.4426950408889634f / sqrtf(static_cast<float>(D));
  float acc[G][8], reference[G], total[G];
#pragma unroll
  for (int h = 0; h < G; ++h) {
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      q[h][e] *= q_scale;
      acc[h][e] = 0.0f;
    }
    reference[h] = -INFINITY;
    total[h] = 0.0f;
  }

  // The bound depends on the warp only, so every lane reaches every shuffle.
  for (int j = 0; j < steps; ++j) {
    fetch(j + kSplitStages - 1, row_ahead, end);
    // The page-table read for the step after that overlaps this step's wait and arithmetic.
    row_ahead = row_of(j + kSplitStages);
    wait_async_copies<kSplitStages - 1>();  // step j's group has landed
    const int first = warp_begin + j * Tile::kStride, stage = j % kSplitStages;
    if constexpr (Kv::kRowsToMaxLen) {
      // The first steps were copied up to `stop`, before the length was known: their V rows past
      // the end hold whatever the cache holds there.
      if (j < kSplitStages - 1 && first + Tile::kKeys > end) {
#pragma unroll
        for (int r = 0; r < Tile::kLoads; ++r)
          if (first + r * Tile::kKeysPerLoad + slot >= end) ring[stage][r][1][threadIdx.x] = make_uint4(0, 0, 0, 0);
      }
    }

    // Lane `part` of the key's L lanes holds its 8 elements' share of each of the V = kLoads·G
    // scores of the step (x[h·kLoads + r]); reduce_scatter leaves each lane kOwned complete ones.
    constexpr int L = Tile::kLanesPerKey, V = Tile::kLoads * G, kOwned = V > L ? V / L : 1;
    static_assert(Tile::kLoads == 2, "a lane's own scores pair up the two rows of one head");
    float x[V];
#pragma unroll
    for (int r = 0; r < Tile::kLoads; ++r) {
      float k[8];
      bf16x8_to_floats(ring[stage][r][0][threadIdx.x], k);
#pragma unroll
      for (int h = 0; h < G; ++h) {
        float dot = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) dot += q[h][e] * k[e];
        x[h * Tile::kLoads + r] = dot;
      }
    }
    reduce_scatter<V, V, L / 2>(x, part);
    const int owned = owned_first<V, L / 2>(part);  // a multiple of kOwned
    // The owned scores' heads (one per pair of values) and their references.
    constexpr int kHeads = kOwned >= 2 ? kOwned / 2 : 1;
    float step_max[kHeads], own_reference[kHeads];
    auto select_own_references = [&] {
#pragma unroll
      for (int j = 0; j < kHeads; ++j) {
        const int h = owned / Tile::kLoads + j;
        own_reference[j] = reference[0];
#pragma unroll
        for (int g = 1; g < G; ++g) own_reference[j] = h == g ? reference[g] : own_reference[j];
      }
    };
#pragma unroll
    for (int i = 0; i < kOwned; ++i) {
      const int r = (owned + i) % Tile::kLoads;
      if (first + r * Tile::kKeysPerLoad + slot >= end) x[i] = -INFINITY;  // also whatever a K row past the end held
    }
#pragma unroll
    for (int j = 0; j < kHeads; ++j) {
      if constexpr (kOwned >= 2) {
        step_max[j] = fmaxf(x[2 * j], x[2 * j + 1]);
      } else {  // the other row of the lane's head is held at the last halving's offset
        step_max[j] = fmaxf(x[0], __shfl_xor_sync(0xffffffffu, x[0], L / V));
      }
    }
    select_own_references();

    // Lazy rescaling: the weights are taken against a reference that is raised only when a step's
    // maximum passes it by more than kRescaleSlack, so they stay below 2^kRescaleSlack and the
    // final division makes the result exact all the same; most steps then skip the rescale of
    // the accumulators (8·G multiplies and G exponentials per lane): 2-7% faster on every GQA
    // shape, the SMs having issued an instruction in ~70% of their cycles. A warp raises all its
    // states together or none.
    bool raise = false;
#pragma unroll
    for (int j = 0; j < kHeads; ++j) raise |= step_max[j] > own_reference[j] + kRescaleSlack;  // always at a first valid key
    const int key_lanes = threadIdx.x & 31 & ~(L - 1);
    if (__any_sync(0xffffffffu, raise)) {
#pragma unroll
      for (int h = 0; h < G; ++h) {
        // From the lane holding head h's scores, which holds kHeads consecutive heads.
        const float head_max = __shfl_sync(0xffffffffu, step_max[h % kHeads], key_lanes + owner_part<V, L / 2>(h * Tile::kLoads));
        const float raised = fmaxf(reference[h], head_max);
        // A state that has seen no valid key yet holds zeros: leave them, rather than scale by 2^(-inf - -inf).
        const float correction = raised == -INFINITY ? 1.0f : fast_exp2(reference[h] - raised);
        total[h] *= correction;
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[h][e] *= correction;
        reference[h] = raised;
      }
      select_own_references();
    }
    // Each lane exponentiates only its own scores, then every lane of the key gathers all V weights.
#pragma unroll
    for (int i = 0; i < kOwned; ++i) {
      const float shift = own_reference[i / Tile::kLoads];
      x[i] = fast_exp2(x[i] - (shift == -INFINITY ? 0.0f : shift));  // weights 2^-inf = 0 before a first key
    }
    float score[Tile::kLoads][G];  // from here on, the keys' weights
#pragma unroll
    for (int h = 0; h < G; ++h) {
#pragma unroll
      for (int r = 0; r < Tile::kLoads; ++r) {
        const int v = h * Tile::kLoads + r;
        score[r][h] = __shfl_sync(0xffffffffu, x[v % kOwned], key_lanes + owner_part<V, L / 2>(v));
        total[h] += score[r][h];
      }
    }
    // One V row widened at a time: 8 live values instead of kLoads·8. Zero-filled rows past the
    // end have weight 0.
#pragma unroll
    for (int r = 0; r < Tile::kLoads; ++r) {
      float v[8];
      bf16x8_to_floats(ring[stage][r][1][threadIdx.x], v);
#pragma unroll
      for (int h = 0; h < G; ++h) {
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[h][e] += score[r][h] * v[e];
      }
    }
  }
  // The trailing zero-fill groups land, and every warp leaves the ring, before it holds the states.
  wait_async_copies<0>();
  __syncthreads();

  // Merge the block's softmax states: one per (warp, key slot).
  auto& state_acc = *reinterpret_cast<float(*)[Tile::kStates][G][D]>(shared);
  __shared__ float state_max[Tile::kStates][G];  // becomes each state's weight in the merge
  __shared__ float state_total[Tile::kStates][G];
  __shared__ float block_lse[G];
  const int state = warp * Tile::kKeysPerLoad + slot;
#pragma unroll
  for (int h = 0; h < G; ++h) {
    if (part == 0) {
      state_max[state][h] = reference[h];
      state_total[state][h] = total[h];
    }
    float4* destination = reinterpret_cast<float4*>(&state_acc[state][h][part * 8]);
    destination[0] = make_float4(acc[h][0], acc[h][1], acc[h][2], acc[h][3]);
    destination[1] = make_float4(acc[h][4], acc[h][5], acc[h][6], acc[h][7]);
  }
  __syncthreads();
  // A warp per head, lane s holding state s: the maximum and the sum are shuffles, not a loop.
  for (int h = warp; h < G; h += kSplitWarps) {
    const bool holds = lane < Tile::kStates;
    const float state_top = holds ? state_max[lane][h] : -INFINITY;
    const float top = warp_reduce(state_top, MaxOp{});  // finite: the piece holds a key
    const float weight = fast_exp2(state_top - top);
    const float sum = warp_sum(holds ? state_total[lane][h] * weight : 0.0f);
    if (holds) state_max[lane][h] = weight / sum;
    if (lane == 0) block_lse[h] = top + log2f(sum);
  }
  __syncthreads();

  const int used = pieces_of(length, piece);  // the sequence's pieces
  const std::size_t query0 = static_cast<std::size_t>(b) * a.q_heads + kv_head * G;
  // Four consecutive values of one head per thread and column. This tail is splitk_mma's
  // write_piece_column and finish_pieces (decode_attention_merge.cuh) written out: ending through
  // them made all 16 splitk benchmarks 3.2-13.3% slower (kgate ab, 3 rounds, one H200, session 26).
  // The PTX differed only in the tail's index conversions and where the arrival flag sits in shared
  // memory, the registers were the same, but ptxas scheduled the key loop's SASS differently.
  for (int column = threadIdx.x; column < G * D / 4; column += kSplitThreads) {
    const int h = column / (D / 4), e = column % (D / 4) * 4;
    float4 value = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int s = 0; s < Tile::kStates; ++s) accumulate(value, state_max[s][h], *reinterpret_cast<const float4*>(&state_acc[s][h][e]));
    if (used == 1) {
      store_bf16x4(a.out + (query0 + h) * D + e, value);
    } else {
      const std::size_t at = (query0 + h) * pieces + split;
      *reinterpret_cast<float4*>(a.partial_out + at * D + e) = value;
      if (e == 0) a.partial_lse[at] = block_lse[h];
    }
  }
  if (used == 1) return;

  __shared__ bool completes;
  __syncthreads();  // every thread's partial is written, and the states are read
  if (threadIdx.x == 0) {
    int* arrivals = a.arrivals + static_cast<std::size_t>(b) * a.kv_heads + kv_head;
    __threadfence();  // release: the block's partial before its count
    completes = atomicAdd(arrivals, 1) == used - 1;
    if (completes) {
      *arrivals = 0;    // every piece has counted: zero again for the next launch
      __threadfence();  // acquire: the other pieces' partials after their counts
    }
  }
  __syncthreads();
  if (completes) merge_pieces<D, G, kSplitThreads>(a, query0, pieces, used, shared);
}

// Launches `Kernel` (Threads threads, SharedBytes of dynamic shared memory) over the split plan of
// its resident blocks: grid (piece, KV head, sequence). Any split kernel: (a, kv, piece, pieces).
template <auto Kernel, int Threads, int SharedBytes, class Kv>
void launch_split_plan(const AttentionArgs& a, const Kv& kv, cudaStream_t stream) {
  const int splits =
      launch_splits(static_cast<std::int64_t>(a.batch) * a.kv_heads, a.max_len, resident_blocks<Kernel, Threads, SharedBytes>());
  const int piece = split_length(a.max_len, splits), pieces = pieces_of(a.max_len, piece);
  if (pieces > a.max_splits) throw std::logic_error("split plan exceeds the scratch the family declared");
  Kernel<<<dim3(pieces, a.kv_heads, a.batch), Threads, SharedBytes, stream>>>(a, kv, piece, pieces);
  KGATE_CHECK_LAUNCH();
}

// Calls launch.template operator()<D, G>() with a's head dimension and GQA group where the split
// kernels are compiled for them; otherwise throws UnsupportedShape.
template <class Launch>
void dispatch_split_attention(const AttentionArgs& a, Launch&& launch) {
  require_whole_groups(a);
  if (a.batch > 65535) throw UnsupportedShape("more than 65535 sequences (grid z)");
  const int group = a.q_heads / a.kv_heads;
  auto with_group = [&]<int D>() {
    switch (group) {
      case 1: return launch.template operator()<D, 1>();
      case 2: return launch.template operator()<D, 2>();
      case 4: return launch.template operator()<D, 4>();
      case 8: return launch.template operator()<D, 8>();
      default: throw UnsupportedShape("GQA group of " + std::to_string(group) + ": compiled for 1, 2, 4 and 8");
    }
  };
  switch (a.head_dim) {
    case 64: return with_group.template operator()<64>();
    case 128: return with_group.template operator()<128>();
    case 256: return with_group.template operator()<256>();
    default: throw UnsupportedShape("head_dim " + std::to_string(a.head_dim) + ": compiled for 64, 128 and 256");
  }
}

template <class Kv>
void launch_split_attention(const AttentionArgs& a, const Kv& kv, cudaStream_t stream) {
  dispatch_split_attention(a,
                           [&]<int D, int G>() { launch_split_plan<attention_split_kernel<Kv, D, G>, kSplitThreads, 0>(a, kv, stream); });
}

}  // namespace kgate::kernels
