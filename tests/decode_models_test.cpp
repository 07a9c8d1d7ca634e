// The decode-step families (RoPE, SiLU-and-mul, GEMV, decode attention contiguous and paged):
// bytes/FLOP models, fp64 references and input generators checked against values worked out by
// hand, and the split-K plan the attention kernels share with the family's scratch size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "kernels/common/decode_attention_args.hpp"
#include "kernels/common/decode_attention_problem.hpp"
#include "kgate/core/registry.hpp"

namespace {

using kgate::DType;
using kgate::HostTensors;
using kgate::Shape;

const kgate::Family& family(const char* name) {
  const kgate::Family* f = kgate::Registry::instance().find_family(name);
  if (!f) throw std::runtime_error(std::string("family not registered: ") + name);
  return *f;
}

// Runs a tensor's custom_init, or fails the test if it has none.
std::vector<double> generate(const kgate::TensorSpec& spec, std::uint64_t seed) {
  EXPECT_TRUE(static_cast<bool>(spec.custom_init)) << spec.name;
  std::vector<double> values(spec.count);
  if (spec.custom_init) spec.custom_init(seed, values);
  return values;
}

// A copy: a reference into `specs` made g++ 13 warn of a reference dangling from `name`'s temporary.
kgate::TensorSpec spec_named(const std::vector<kgate::TensorSpec>& specs, const std::string& name) {
  for (const auto& s : specs)
    if (s.name == name) return s;
  throw std::runtime_error("no tensor named " + name);
}

Shape rope(std::int64_t t, std::int64_t hq, std::int64_t hk, std::int64_t d, std::int64_t max_pos) {
  return Shape({{"t", t}, {"hq", hq}, {"hk", hk}, {"d", d}, {"max_pos", max_pos}}, DType::bf16);
}

Shape attention(std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t d, std::int64_t l) {
  return Shape({{"b", b}, {"hq", hq}, {"hkv", hkv}, {"d", d}, {"l", l}}, DType::bf16);
}

Shape ragged_attention(std::int64_t b, std::int64_t hq, std::int64_t hkv, std::int64_t d, std::int64_t l) {
  return Shape({{"b", b}, {"hq", hq}, {"hkv", hkv}, {"d", d}, {"l", l}, {"l_min", 1}}, DType::bf16);
}

}  // namespace

TEST(DecodeFamilies, AreRegisteredWithTheirVariants) {
  const auto& r = kgate::Registry::instance();
  const std::map<std::string, std::set<std::string>> expected = {
      {"rope", {"naive", "vectorized", "token_block"}},
      {"silu_and_mul", {"naive", "vectorized", "flat"}},
      {"gemv", {"naive", "cublas", "vectorized", "streamed"}},
      {"decode_attention", {"naive", "splitk", "splitk_mma"}},
      {"decode_attention_paged", {"naive", "splitk", "splitk_mma"}},
  };
  for (const auto& [name, variants] : expected) {
    std::set<std::string> found;
    for (const kgate::Variant* v : r.variants_of(name)) {
      found.insert(v->info.name);
      const auto role = v->info.name == "naive"    ? kgate::VariantRole::reference
                        : v->info.name == "cublas" ? kgate::VariantRole::vendor
                                                   : kgate::VariantRole::candidate;
      EXPECT_EQ(v->info.role, role) << v->info.full_name();
    }
    EXPECT_EQ(found, variants) << name;
  }
  EXPECT_TRUE(family("gemv").read_dominated());
  EXPECT_TRUE(family("decode_attention").read_dominated());
  EXPECT_FALSE(family("rope").read_dominated());
}

// ---- RoPE -----------------------------------------------------------------------------------

TEST(RopeModel, BytesAndFlops) {
  const auto& f = family("rope");
  // q and k read and written: 2·4·(32 + 8)·128·2; positions 4·4; a cos and a sin row per token 4·64·4·2.
  EXPECT_DOUBLE_EQ(f.min_bytes(rope(4, 32, 8, 128, 8192)), 2.0 * 4 * 40 * 128 * 2 + 16 + 4 * 64 * 4 * 2);
  // 6 FLOPs per pair: 4·40 heads·64 pairs.
  EXPECT_DOUBLE_EQ(f.flops(rope(4, 32, 8, 128, 8192)), 6.0 * 4 * 40 * 64);
}

TEST(RopeModel, PositionZeroIsTheIdentity) {
  const auto& f = family("rope");
  HostTensors t = {{0.5, -0.25, 0.125, 1.0}, {0.75, 0.5, -1.0, 0.0625}, {0.0}, {}, {}};
  const HostTensors before = t;
  f.reference(rope(1, 1, 1, 4, 1), t);
  EXPECT_EQ(t[0], before[0]);
  EXPECT_EQ(t[1], before[1]);
}

TEST(RopeModel, RotatesHalvesByPositionTimesFrequency) {
  const auto& f = family("rope");
  // d = 4: pair 0 is (x0, x2) at frequency 1, pair 1 is (x1, x3) at 500000^(-1/2).
  const double position = 3;
  HostTensors t = {{1.0, 2.0, 0.0, -1.0}, {0.0, 1.0, 1.0, 0.0}, {position}, {}, {}};
  f.reference(rope(1, 1, 1, 4, 8), t);
  const double a0 = position, a1 = position / std::sqrt(500000.0);
  EXPECT_NEAR(t[0][0], 1.0 * std::cos(a0) - 0.0 * std::sin(a0), 1e-12);
  EXPECT_NEAR(t[0][2], 0.0 * std::cos(a0) + 1.0 * std::sin(a0), 1e-12);
  EXPECT_NEAR(t[0][1], 2.0 * std::cos(a1) + 1.0 * std::sin(a1), 1e-12);
  EXPECT_NEAR(t[0][3], -1.0 * std::cos(a1) + 2.0 * std::sin(a1), 1e-12);
  // k rotates the same way: (0, 1) for pair 0 becomes (-sin, cos).
  EXPECT_NEAR(t[1][0], -std::sin(a0), 1e-12);
  EXPECT_NEAR(t[1][2], std::cos(a0), 1e-12);
}

TEST(RopeModel, InputsHoldValidPositionsAndTheTrueCache) {
  const auto& f = family("rope");
  const Shape s = rope(300, 4, 1, 8, 100);
  const auto specs = f.tensors(s);
  const auto positions = generate(spec_named(specs, "positions"), 42);
  ASSERT_EQ(positions.size(), 300u);
  std::set<double> distinct;
  for (double p : positions) {
    EXPECT_GE(p, 0);
    EXPECT_LT(p, 100);
    EXPECT_EQ(p, std::floor(p));
    distinct.insert(p);
  }
  EXPECT_GT(distinct.size(), 50u) << "positions should be spread over [0, max_pos)";
  EXPECT_NE(positions, generate(spec_named(specs, "positions"), 43)) << "positions come from the seed";

  const auto cos = generate(spec_named(specs, "cos"), 0), sin = generate(spec_named(specs, "sin"), 0);
  ASSERT_EQ(cos.size(), 100u * 4);
  // Row 7, pair 2 of d = 8: angle 7 · 500000^(-4/8).
  const double angle = 7 * std::pow(500000.0, -0.5);
  EXPECT_NEAR(cos[7 * 4 + 2], std::cos(angle), 1e-15);
  EXPECT_NEAR(sin[7 * 4 + 2], std::sin(angle), 1e-15);
  EXPECT_EQ(cos[0], 1.0);
  EXPECT_EQ(sin[0], 0.0);
}

TEST(RopeModel, ToleranceFloorGrowsWithTheLargestPosition) {
  EXPECT_DOUBLE_EQ(family("rope").tolerance(rope(1, 1, 1, 128, 4096)).abs_floor, 1.0 / 256);
  EXPECT_DOUBLE_EQ(family("rope").tolerance(rope(1, 1, 1, 128, 1)).abs_floor, std::ldexp(1.0, -20));
}

// ---- SiLU and mul -----------------------------------------------------------------------------

TEST(SiluAndMulModel, BytesAndFlops) {
  const auto& f = family("silu_and_mul");
  const Shape s({{"m", 16}, {"i", 14336}}, DType::bf16);
  EXPECT_DOUBLE_EQ(f.min_bytes(s), 3.0 * 16 * 14336 * 2);
  EXPECT_DOUBLE_EQ(f.flops(s), 5.0 * 16 * 14336);
}

TEST(SiluAndMulModel, ReferenceByHand) {
  const auto& f = family("silu_and_mul");
  // Row [gate 0, 2, -1 | up 3, 5, 4]: silu(0) = 0, silu(2) = 2 / (1 + e^-2), silu(-1) = -1 / (1 + e).
  HostTensors t = {{0.0, 2.0, -1.0, 3.0, 5.0, 4.0}, {9, 9, 9}};
  f.reference(Shape({{"m", 1}, {"i", 3}}, DType::bf16), t);
  EXPECT_EQ(t[1][0], 0.0);
  EXPECT_NEAR(t[1][1], 2.0 / (1.0 + std::exp(-2.0)) * 5.0, 1e-12);
  EXPECT_NEAR(t[1][2], -1.0 / (1.0 + std::exp(1.0)) * 4.0, 1e-12);
}

TEST(SiluAndMulModel, ReferenceUsesEachRowsOwnHalves) {
  const auto& f = family("silu_and_mul");
  HostTensors t = {{1.0, 2.0, 3.0, 4.0}, {0, 0}};  // 2 rows of i = 1: [gate 1 | up 2], [gate 3 | up 4]
  f.reference(Shape({{"m", 2}, {"i", 1}}, DType::bf16), t);
  EXPECT_NEAR(t[1][0], 1.0 / (1.0 + std::exp(-1.0)) * 2.0, 1e-12);
  EXPECT_NEAR(t[1][1], 3.0 / (1.0 + std::exp(-3.0)) * 4.0, 1e-12);
}

// ---- GEMV -------------------------------------------------------------------------------------

TEST(GemvModel, BytesAndFlops) {
  const auto& f = family("gemv");
  const Shape s({{"m", 1}, {"n", 4096}, {"k", 14336}}, DType::bf16);
  EXPECT_DOUBLE_EQ(f.min_bytes(s), 4096.0 * 14336 * 2 + 14336 * 2 + 4096 * 2);
  EXPECT_DOUBLE_EQ(f.flops(s), 2.0 * 4096 * 14336);
}

TEST(GemvModel, ReferenceIsXTimesWTransposed) {
  const auto& f = family("gemv");
  // x [2, 2] = [[1, 2], [3, 4]]; W [3, 2] = [[1, 0], [0, 1], [1, 1]]; y = x·Wᵀ = [[1, 2, 3], [3, 4, 7]].
  HostTensors t = {{1, 2, 3, 4}, {1, 0, 0, 1, 1, 1}, std::vector<double>(6)};
  f.reference(Shape({{"m", 2}, {"n", 3}, {"k", 2}}, DType::bf16), t);
  EXPECT_EQ(t[2], (std::vector<double>{1, 2, 3, 3, 4, 7}));
}

TEST(GemvModel, ToleranceFloorScalesWithSqrtK) {
  const auto& f = family("gemv");
  const double small = f.tolerance(Shape({{"m", 1}, {"n", 1}, {"k", 1024}}, DType::bf16)).abs_floor;
  const double large = f.tolerance(Shape({{"m", 1}, {"n", 1}, {"k", 4096}}, DType::bf16)).abs_floor;
  EXPECT_NEAR(large / small, 2.0, 1e-12);
  // 2^-8 · sqrt(k) · rms²; magnitudes uniform in [a, b) = [1/64, 1) have mean square (a² + ab + b²) / 3.
  const double mean_square = (1.0 / 4096 + 1.0 / 64 + 1.0) / 3;
  EXPECT_NEAR(large, std::ldexp(64.0 * mean_square, -8), 1e-12);
  EXPECT_EQ(f.tolerance(Shape({{"m", 1}, {"n", 1}, {"k", 4096}}, DType::bf16)).rel_l2, 1e-2);
}

// ---- decode attention -------------------------------------------------------------------------

TEST(DecodeAttentionModel, LengthsAreValidAndAFunctionOfTheShape) {
  for (const Shape& s : family("decode_attention").test_shapes()) {
    const auto dims = kgate::kernels::AttentionDims::of(s);
    const auto specs = family("decode_attention").tensors(s);
    const auto lengths = generate(spec_named(specs, "lengths"), 1);
    EXPECT_EQ(lengths, generate(spec_named(specs, "lengths"), 2)) << s.id();
    ASSERT_EQ(lengths.size(), static_cast<std::size_t>(dims.batch));
    EXPECT_EQ(lengths[0], dims.max_len) << s.id();
    for (double l : lengths) {
      EXPECT_GE(l, 1) << s.id();
      EXPECT_LE(l, dims.max_len) << s.id();
    }
  }
  // Bench shapes: every sequence at the full length.
  for (const Shape& s : family("decode_attention").bench_shapes()) {
    const auto dims = kgate::kernels::AttentionDims::of(s);
    EXPECT_EQ(kgate::kernels::total_length(dims), dims.batch * dims.max_len) << s.id();
  }
  // A ragged batch really is ragged.
  const auto lengths = kgate::kernels::sequence_lengths(kgate::kernels::AttentionDims::of(ragged_attention(16, 4, 1, 64, 1000)));
  EXPECT_GT(std::set<std::int64_t>(lengths.begin(), lengths.end()).size(), 8u);
}

TEST(DecodeAttentionModel, BytesAndFlops) {
  const auto& f = family("decode_attention");
  const Shape s = attention(64, 32, 8, 128, 2048);
  const double keys = 64.0 * 2048;
  // K and V rows: 2·8·128·2 per key; q and out: 64·32·128·2 each; lengths 64·4.
  EXPECT_DOUBLE_EQ(f.min_bytes(s), 2.0 * 8 * 128 * 2 * keys + 2.0 * 64 * 32 * 128 * 2 + 64 * 4);
  EXPECT_DOUBLE_EQ(f.flops(s), 4.0 * 32 * 128 * keys);
  // Paged: plus one 4-byte page-table entry per 16 keys.
  EXPECT_DOUBLE_EQ(family("decode_attention_paged").min_bytes(s), f.min_bytes(s) + 4.0 * 64 * 128);
  // Ragged: the model counts the keys actually present.
  const Shape ragged = ragged_attention(3, 4, 2, 64, 100);
  const double present = static_cast<double>(kgate::kernels::total_length(kgate::kernels::AttentionDims::of(ragged)));
  EXPECT_LT(present, 300);
  EXPECT_DOUBLE_EQ(f.flops(ragged), 4.0 * 4 * 64 * present);
}

TEST(DecodeAttentionModel, OneKeyReturnsItsValue) {
  const auto& f = family("decode_attention");
  // hq 4, hkv 2: query heads 0, 1 read KV head 0, heads 2, 3 read KV head 1; d = 2, one key.
  HostTensors t = {{1, 2, 3, 4, 5, 6, 7, 8}, {1, 1, 1, 1}, {0.5, -0.5, 0.25, 0.75}, {1}, std::vector<double>(8), {}, {}};
  f.reference(attention(1, 4, 2, 2, 1), t);
  EXPECT_EQ(t[4], (std::vector<double>{0.5, -0.5, 0.5, -0.5, 0.25, 0.75, 0.25, 0.75}));
}

TEST(DecodeAttentionModel, SoftmaxWeightsByHand) {
  const auto& f = family("decode_attention");
  // d = 1 (scale 1): q = 1, keys 0 and ln 3 give weights 1/4 and 3/4; a third key past the length
  // (l = 3, length 2) must be ignored.
  HostTensors t = {{1.0}, {0.0, std::log(3.0), 100.0}, {2.0, 6.0, 1000.0}, {2}, {0.0}, {}, {}, {}};
  f.reference(attention(1, 1, 1, 1, 3), t);
  EXPECT_NEAR(t[4][0], 0.25 * 2.0 + 0.75 * 6.0, 1e-12);
  // Scale 1/sqrt(d): d = 4 with the same dot products scaled by 2 gives the same weights.
  HostTensors t4 = {{1, 1, 1, 1},
                    {0, 0, 0, 0, 0.5 * std::log(3.0), 0.5 * std::log(3.0), 0.5 * std::log(3.0), 0.5 * std::log(3.0)},
                    {2, 2, 2, 2, 6, 6, 6, 6},
                    {2},
                    std::vector<double>(4),
                    {},
                    {},
                    {}};
  f.reference(attention(1, 1, 1, 4, 2), t4);
  for (double v : t4[4]) EXPECT_NEAR(v, 5.0, 1e-12);
}

TEST(DecodeAttentionModel, PagedReferenceMatchesContiguousThroughThePageTable) {
  const auto& contiguous = family("decode_attention");
  const auto& paged = family("decode_attention_paged");
  const Shape s = ragged_attention(3, 4, 2, 8, 40);  // 3 pages per sequence, 9 pages in all
  const auto dims = kgate::kernels::AttentionDims::of(s);
  const auto paged_specs = paged.tensors(s);
  const auto table = generate(spec_named(paged_specs, "page_table"), 7);
  ASSERT_EQ(table.size(), 9u);
  std::vector<double> sorted = table;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> identity(9);
  std::iota(identity.begin(), identity.end(), 0.0);
  EXPECT_EQ(sorted, identity) << "the page table is a permutation of the pages";
  EXPECT_NE(table, identity) << "pages are scattered";

  const std::size_t row = dims.head_dim, cache = 3 * 2 * 40 * row;
  std::vector<double> q(3 * 4 * row), k(cache), v(cache);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = kgate::random_value(1, i, {});
  for (std::size_t i = 0; i < cache; ++i) k[i] = kgate::random_value(2, i, {}), v[i] = kgate::random_value(3, i, {});
  const auto lengths_spec = spec_named(contiguous.tensors(s), "lengths");
  const std::vector<double> lengths = generate(lengths_spec, 0);

  // Scatter the contiguous cache [b, hkv, 40, d] into pages [9 (48 keys per sequence), hkv, 16, d].
  std::vector<double> k_pages(9 * 2 * 16 * row), v_pages(k_pages.size());
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t j = 0; j < 40; ++j) {
        const auto page = static_cast<std::size_t>(table[b * 3 + j / 16]);
        for (std::size_t e = 0; e < row; ++e) {
          k_pages[((page * 2 + h) * 16 + j % 16) * row + e] = k[((b * 2 + h) * 40 + j) * row + e];
          v_pages[((page * 2 + h) * 16 + j % 16) * row + e] = v[((b * 2 + h) * 40 + j) * row + e];
        }
      }
  HostTensors tc = {q, k, v, lengths, std::vector<double>(q.size()), {}, {}, {}};
  contiguous.reference(s, tc);
  HostTensors tp = {q, k_pages, v_pages, table, lengths, std::vector<double>(q.size()), {}, {}, {}};
  paged.reference(s, tp);
  EXPECT_EQ(tc[4], tp[5]);
}

TEST(DecodeAttentionModel, ScratchIsDeclaredAsScratchAndLargeEnough) {
  for (const char* name : {"decode_attention", "decode_attention_paged"}) {
    for (const Shape& s : family(name).bench_shapes()) {
      const auto dims = kgate::kernels::AttentionDims::of(s);
      const auto specs = family(name).tensors(s);
      const auto& partial = spec_named(specs, "partial_out");
      const auto& lse = spec_named(specs, "partial_lse");
      EXPECT_EQ(partial.access, kgate::Access::scratch);
      EXPECT_EQ(lse.access, kgate::Access::scratch);
      // One arrival counter per (sequence, KV head), which the launches keep zeroed.
      const auto& arrivals = spec_named(specs, "arrivals");
      EXPECT_EQ(arrivals.access, kgate::Access::zeroed_scratch);
      EXPECT_EQ(arrivals.dtype, DType::i32);
      EXPECT_EQ(arrivals.count, static_cast<std::size_t>(dims.batch * dims.kv_heads)) << s.id();
      const int splits = kgate::kernels::max_splits(dims.batch * dims.kv_heads, dims.max_len);
      EXPECT_EQ(lse.count, static_cast<std::size_t>(dims.batch * dims.q_heads * splits)) << s.id();
      EXPECT_EQ(partial.count, lse.count * static_cast<std::size_t>(dims.head_dim)) << s.id();
      // Small next to the cache: tens of MiB at most.
      EXPECT_LE(partial.bytes(), std::size_t{32} << 20) << name << " " << s.id();
    }
  }
}

TEST(DecodeAttentionSplitPlan, LaunchesHalfThePlan) {
  using kgate::kernels::launch_splits;
  // 132 SMs × 4 resident blocks = 528 (the H100): batch 1's 64 pieces of 512 keys become 32 of 1024.
  EXPECT_EQ(launch_splits(8, 32768, 528), 32);
  // Batch 16, 8 KV heads: the plan's 4 pieces (512 blocks) become 2.
  EXPECT_EQ(launch_splits(128, 4096, 528), 2);
  // A plan of one piece stays one, an odd plan rounds up.
  EXPECT_EQ(launch_splits(512, 4096, 528), 1);
  EXPECT_EQ(launch_splits(512, 2048, 396), 2);
}

TEST(DecodeAttentionSplitPlan, FillsWholeWaves) {
  using kgate::kernels::plan_splits;
  // 132 SMs × 3 resident blocks = 396 per wave.
  // Batch 1, 8 KV heads, 32K keys: 47 splits of 704 keys -> 376 blocks, 95% of one wave (45 would
  // round to 768-key pieces, 43 used, 87%).
  EXPECT_EQ(plan_splits(8, 32768, 396), 47);
  // 64 × 8 = 512 pairs: one split is 1.3 waves (65% filled), two 86%, three 1536 blocks in 4 waves, 97%.
  EXPECT_EQ(plan_splits(512, 2048, 396), 3);
  // 256 × 8 = 2048 pairs: 2 splits, 4096 blocks in 11 waves (94%).
  EXPECT_EQ(plan_splits(2048, 4096, 396), 2);
  // 16 × 8 = 128 pairs: 3 splits -> 384 blocks, one wave.
  EXPECT_EQ(plan_splits(128, 4096, 396), 3);
  // With 4 blocks per SM (528) the large batches fill whole waves unsplit: no merge pass.
  EXPECT_EQ(plan_splits(512, 4096, 528), 1);
  EXPECT_EQ(plan_splits(2048, 2048, 528), 1);
  EXPECT_EQ(plan_splits(8, 32768, 528), 64);
  // Never more splits than 64-key pieces.
  EXPECT_EQ(plan_splits(1, 100, 528), 2);
  EXPECT_EQ(plan_splits(1, 1, 528), 1);
  // Batch 1, 4K keys: 64-key pieces could not fill 396 slots (512 blocks take two waves); the best
  // fill is 32 pieces of 128 keys.
  EXPECT_EQ(plan_splits(8, 4096, 396), 32);
  // The family's scratch bound covers every plan, for any device.
  for (std::int64_t pairs : {1, 8, 32, 128, 512, 2048, 8192})
    for (std::int64_t length : {1, 17, 2047, 32768})
      for (std::int64_t resident : {1, 100, 396, 528, 2048, 100000})
        EXPECT_LE(plan_splits(pairs, length, resident), kgate::kernels::max_splits(pairs, length))
            << pairs << " pairs, " << length << " keys, " << resident << " resident";
}

TEST(DecodeAttentionSplitPlan, PiecesAreAlignedAndCoverEachSequenceExactly) {
  using kgate::kernels::split_length;
  using kgate::kernels::used_splits;
  EXPECT_EQ(split_length(32768, 66), 512);  // ceil(32768 / 66) = 497, rounded up to 64 keys
  EXPECT_EQ(used_splits(32768, 66), 64);
  EXPECT_EQ(split_length(1, 66), 64);
  EXPECT_EQ(used_splits(1, 66), 1);
  for (int splits : {1, 2, 3, 7, 64, 66, 512}) {
    for (int length : {1, 15, 17, 63, 64, 65, 1000, 2047, 2048, 32768}) {
      const int piece = split_length(length, splits), used = used_splits(length, splits);
      EXPECT_EQ(piece % kgate::kernels::kSplitQuantum, 0);
      EXPECT_EQ(piece % kgate::kernels::kPageSize, 0);
      EXPECT_GE(used, 1);
      EXPECT_LE(used, splits) << length << " keys, " << splits << " splits";
      EXPECT_GE(static_cast<std::int64_t>(used) * piece, length);      // every key in some piece
      EXPECT_LT(static_cast<std::int64_t>(used - 1) * piece, length);  // no piece empty
    }
  }
}

TEST(DecodeAttentionModel, RaggedCachesHoldNanPastEachLength) {
  const auto& f = family("decode_attention");
  const Shape s = ragged_attention(3, 4, 2, 8, 40);
  const auto specs = f.tensors(s);
  const std::vector<double> lengths = generate(spec_named(specs, "lengths"), 0);
  ASSERT_LT(*std::min_element(lengths.begin(), lengths.end()), 40.0) << "the fixture needs a short sequence";
  for (const char* name : {"k_cache", "v_cache"}) {
    const std::vector<double> cache = generate(spec_named(specs, name), 5);
    ASSERT_EQ(cache.size(), static_cast<std::size_t>(3 * 2 * 40 * 8));
    for (std::size_t i = 0; i < cache.size(); ++i) {
      const std::size_t b = i / (2 * 40 * 8), key = i / 8 % 40;
      if (static_cast<double>(key) < lengths[b]) EXPECT_EQ(cache[i], kgate::random_value(5, i, {})) << name << " [" << i << "]";
      else EXPECT_TRUE(std::isnan(cache[i])) << name << " [" << i << "]";
    }
  }
  // Full sequences have no unused rows: the harness fills the cache on the device.
  EXPECT_FALSE(static_cast<bool>(spec_named(f.tensors(attention(1, 32, 8, 128, 32768)), "k_cache").custom_init));
}

TEST(DecodeAttentionSplitPlan, EverySequenceIsCutWhereTheLongestIs) {
  using kgate::kernels::pieces_of;
  using kgate::kernels::split_length;
  // The kernels cut every sequence into the pieces of the longest (max_len): a block's keys are
  // known before its sequence's length, and a shorter sequence fills a prefix of the pieces.
  EXPECT_EQ(pieces_of(32768, 512), 64);
  EXPECT_EQ(pieces_of(1000, 512), 2);
  EXPECT_EQ(pieces_of(512, 512), 1);
  EXPECT_EQ(pieces_of(513, 512), 2);
  for (int max_len : {1, 17, 1000, 2047, 32768}) {
    for (int splits : {1, 3, 47, 64, 512}) {
      const int piece = split_length(max_len, splits), pieces = pieces_of(max_len, piece);
      EXPECT_LE(pieces, splits) << max_len << " keys, " << splits << " splits";
      for (int length = 1; length <= max_len; length += 1 + length / 7) {
        const int used = pieces_of(length, piece);
        EXPECT_GE(used, 1);
        EXPECT_LE(used, pieces) << length << " of " << max_len << " keys, " << splits << " splits";
        EXPECT_GE(static_cast<std::int64_t>(used) * piece, length);      // every key in some piece
        EXPECT_LT(static_cast<std::int64_t>(used - 1) * piece, length);  // no used piece empty
      }
    }
  }
}

TEST(DecodeAttentionModel, TestShapesCoverTheKernelPaths) {
  std::set<std::int64_t> groups, dims, lengths;
  bool peaked = false;
  for (const Shape& s : family("decode_attention").test_shapes()) {
    const auto d = kgate::kernels::AttentionDims::of(s);
    peaked |= d.query_max >= 32;
    EXPECT_EQ(d.q_heads % d.kv_heads, 0) << s.id();
    EXPECT_LE(d.batch, 4) << s.id() << ": the fp64 reference must stay quick";
    EXPECT_LE(d.max_len, 2048) << s.id();
    groups.insert(d.group());
    dims.insert(d.head_dim);
    lengths.insert(d.max_len);
  }
  for (std::int64_t g : {1, 2, 4, 8}) EXPECT_TRUE(groups.count(g)) << "group " << g;
  for (std::int64_t d : {64, 128, 256}) EXPECT_TRUE(dims.count(d)) << "head_dim " << d;
  for (std::int64_t l : {1, 15, 17, 1000, 2047}) EXPECT_TRUE(lengths.count(l)) << "length " << l;
  // Scores spread over hundreds of log2 units, so that split-K raises its softmax reference
  // (kRescaleSlack) within a piece, not only at a state's first key.
  EXPECT_TRUE(peaked) << "no test shape with q_max of at least 32";
}
