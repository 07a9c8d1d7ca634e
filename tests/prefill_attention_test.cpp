// The prefill attention family: its shapes, bytes/FLOP models and scratch, the fp64 reference
// against values worked out by hand, the straightforward-bf16 baseline, FlashAttention's rule as
// the check applies it to host emulations of a correct kernel and of kernels with planted bugs,
// the choice of naive as the reference for long sequences, and fa2_splitkv's split plan.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <map>
#include <set>

#include "kernels/prefill_attention/split_plan.hpp"
#include "kgate/core/check.hpp"
#include "kgate/core/registry.hpp"

namespace {

using kgate::DType;
using kgate::HostTensors;
using kgate::Shape;
namespace plan = kgate::kernels::prefill;

enum Tensor { kQ, kK, kV, kO, kLse, kPartialO, kPartialLse, kTileCounter, kTileSlots };

const kgate::Family& prefill() {
  const kgate::Family* f = kgate::Registry::instance().find_family("prefill_attention");
  if (!f) throw std::runtime_error("prefill_attention is not registered");
  return *f;
}

Shape shape(std::int64_t b, std::int64_t h, std::int64_t hkv, std::int64_t s, std::int64_t d, bool causal) {
  std::vector<kgate::Dim> dims = {{"b", b}, {"h", h}, {"hkv", hkv}, {"s", s}, {"d", d}};
  if (causal) dims.push_back({"causal", 1});
  return Shape(std::move(dims), DType::bf16);
}

double bf16(double value) { return kgate::bf16_bits_to_float(kgate::float_to_bf16_bits(static_cast<float>(value))); }

// Inputs drawn as the harness draws them (each tensor's distribution, rounded to bf16), outputs
// zeroed.
HostTensors random_tensors(const Shape& s, std::uint64_t seed) {
  const auto specs = prefill().tensors(s);
  HostTensors t(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    t[i].assign(specs[i].count, 0.0);
    if (specs[i].access != kgate::Access::input) continue;
    for (std::size_t j = 0; j < specs[i].count; ++j)
      t[i][j] = bf16(kgate::random_value(kgate::derive_seed(seed, specs[i].name), j, specs[i].distribution));
  }
  return t;
}

// What a kernel computes, emulated on the host in fp32, with the bugs it may carry.
struct Emulation {
  bool round_probabilities = false;  // as tensor-core kernels do before p·v
  bool causal_off_by_one = false;    // row i also sees key i + 1
  bool missing_scale = false;
  bool lse_in_log2 = false;
  int keys_seen = INT_MAX;  // keys past this are dropped
};

struct KernelOutputs {
  std::vector<double> o, lse;
};

KernelOutputs emulate(const Shape& s, const HostTensors& t, const Emulation& e) {
  const std::int64_t B = s.at("b"), H = s.at("h"), Hkv = s.at("hkv"), S = s.at("s"), D = s.at("d");
  const bool causal = s.has("causal");
  const float scale = e.missing_scale ? 1.0f : 1.0f / std::sqrt(static_cast<float>(D));
  KernelOutputs out{std::vector<double>(t[kO].size()), std::vector<double>(t[kLse].size())};
  std::vector<float> p(static_cast<std::size_t>(S));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t kv = (b * Hkv + h / (H / Hkv)) * S;
      for (std::int64_t i = 0; i < S; ++i) {
        const std::int64_t row = (b * H + h) * S + i;
        std::int64_t visible = causal ? std::min(S, i + 1 + (e.causal_off_by_one ? 1 : 0)) : S;
        visible = std::min<std::int64_t>(visible, e.keys_seen);
        float top = -INFINITY;
        for (std::int64_t j = 0; j < visible; ++j) {
          float dot = 0;
          for (std::int64_t x = 0; x < D; ++x) dot += static_cast<float>(t[kQ][row * D + x]) * static_cast<float>(t[kK][(kv + j) * D + x]);
          p[j] = dot * scale;
          top = std::max(top, p[j]);
        }
        float total = 0;
        for (std::int64_t j = 0; j < visible; ++j) total += (p[j] = std::exp(p[j] - top));
        for (std::int64_t x = 0; x < D; ++x) {
          float acc = 0;
          for (std::int64_t j = 0; j < visible; ++j)
            acc += static_cast<float>(e.round_probabilities ? bf16(p[j]) : p[j]) * static_cast<float>(t[kV][(kv + j) * D + x]);
          out.o[row * D + x] = bf16(acc / total);
        }
        const float lse = top + std::log(total);
        out.lse[row] = e.lse_in_log2 ? lse / std::log(2.0f) : lse;
      }
    }
  return out;
}

// The harness's host check of an emulated kernel: fp64 reference, bf16 baseline, the tolerances.
kgate::InstanceCheck check_emulation(const Shape& s, const Emulation& e) {
  const HostTensors inputs = random_tensors(s, 42);
  HostTensors expected = inputs, baseline = inputs;
  prefill().reference(s, expected);
  EXPECT_TRUE(prefill().baseline(s, baseline));
  const KernelOutputs got = emulate(s, inputs, e);
  std::vector<std::vector<std::byte>> outputs(inputs.size());
  outputs[kO] = kgate::encode_values(kgate::DType::bf16, got.o);
  outputs[kLse] = kgate::encode_values(kgate::DType::fp32, got.lse);
  outputs[kTileCounter] = kgate::encode_values(kgate::DType::i32, std::vector<double>(2, 0.0));  // as a launch leaves it
  return kgate::check_outputs(prefill(), s, prefill().tensors(s), expected, &baseline, outputs, "the fp64 host reference");
}

const Shape kCausal = shape(2, 4, 2, 127, 64, true);
const Shape kFull = shape(1, 2, 2, 130, 128, false);

}  // namespace

TEST(PrefillAttention, RegistersTheJourneysScalarSteps) {
  std::map<std::string, kgate::VariantRole> roles;
  for (const kgate::Variant* v : kgate::Registry::instance().variants_of("prefill_attention")) roles[v->info.name] = v->info.role;
  ASSERT_TRUE(roles.contains("naive") && roles.contains("fa1_seqkv") && roles.contains("fa2_splitkv"));
  EXPECT_EQ(roles["naive"], kgate::VariantRole::reference);
  EXPECT_EQ(roles["fa1_seqkv"], kgate::VariantRole::candidate);
  EXPECT_EQ(roles["fa2_splitkv"], kgate::VariantRole::candidate);
}

TEST(PrefillAttention, TestShapesCoverTheIssue) {
  std::set<std::int64_t> lengths, dims;
  std::set<bool> causal;
  bool gqa_32_8 = false, batched = false;
  int host_checked = 0, naive_checked = 0;
  std::set<std::string> ids;
  for (const Shape& s : prefill().test_shapes()) {
    EXPECT_TRUE(ids.insert(s.id()).second) << s.id();
    lengths.insert(s.at("s"));
    dims.insert(s.at("d"));
    causal.insert(s.has("causal"));
    gqa_32_8 |= s.at("h") == 32 && s.at("hkv") == 8;
    batched |= s.at("b") > 1;
    EXPECT_EQ(s.at("h") % s.at("hkv"), 0) << s.id();
    const auto reference = prefill().device_reference(s);
    (reference ? naive_checked : host_checked) += 1;
    if (reference) {
      EXPECT_EQ(*reference, "naive");
    }
    // Long shapes are checked against naive; the host reference stays short.
    EXPECT_EQ(reference.has_value(), s.at("s") >= 2048) << s.id();
  }
  for (const std::int64_t s : {17, 65, 127, 128, 1000, 4096, 16384}) EXPECT_TRUE(lengths.contains(s)) << s;
  EXPECT_EQ(dims, (std::set<std::int64_t>{64, 128}));
  EXPECT_EQ(causal, (std::set<bool>{false, true}));
  EXPECT_TRUE(gqa_32_8);
  EXPECT_TRUE(batched);
  EXPECT_GE(host_checked, 8);
  EXPECT_GE(naive_checked, 4);
  // Ids name benchmarks and baselines: the causal mask is a "causal:1" dimension, absent otherwise.
  EXPECT_EQ(prefill().test_shapes()[0].id(), "b:2/h:4/hkv:4/s:17/d:64/causal:1/bf16");
  EXPECT_EQ(prefill().test_shapes()[1].id(), "b:1/h:4/hkv:4/s:65/d:64/bf16");
}

TEST(PrefillAttention, BenchShapesFollowTheFlashAttention3Convention) {
  std::set<std::int64_t> lengths, dims;
  std::set<bool> causal;
  int gqa = 0;
  for (const Shape& s : prefill().bench_shapes()) {
    EXPECT_EQ(s.at("b") * s.at("s"), 16384) << s.id();
    if (s.at("h") == s.at("hkv")) {
      EXPECT_EQ(s.at("h") * s.at("d"), 2048) << s.id();
      lengths.insert(s.at("s"));
      dims.insert(s.at("d"));
      causal.insert(s.has("causal"));
    } else {
      EXPECT_EQ(s.at("h"), 32);
      EXPECT_EQ(s.at("hkv"), 8);
      ++gqa;
    }
  }
  EXPECT_EQ(lengths, (std::set<std::int64_t>{512, 1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(dims, (std::set<std::int64_t>{64, 128}));
  EXPECT_EQ(causal, (std::set<bool>{false, true}));
  EXPECT_GE(gqa, 2);
}

TEST(PrefillAttention, BytesAndFlopsModels) {
  // q and o: 2·4·100·64 = 51200 bf16 each; k and v: 2·2·100·64 = 25600 each; lse 800 fp32.
  EXPECT_DOUBLE_EQ(prefill().min_bytes(shape(2, 4, 2, 100, 64, false)), 2 * 51200 * 2 + 2 * 25600 * 2 + 800 * 4);
  EXPECT_DOUBLE_EQ(prefill().min_bytes(shape(2, 4, 2, 100, 64, true)), 2 * 51200 * 2 + 2 * 25600 * 2 + 800 * 4);
  // 4·b·h·s²·d, half with the causal mask (the FlashAttention convention).
  EXPECT_DOUBLE_EQ(prefill().flops(shape(2, 4, 2, 100, 64, false)), 4.0 * 2 * 4 * 100 * 100 * 64);
  EXPECT_DOUBLE_EQ(prefill().flops(shape(2, 4, 2, 100, 64, true)), 2.0 * 2 * 4 * 100 * 100 * 64);
  // FlashAttention-3's headline shape: 16K tokens, 16 heads of 128, s = 4096: 550 GFLOP.
  EXPECT_DOUBLE_EQ(prefill().flops(shape(4, 16, 16, 4096, 128, false)), 4.0 * 4 * 16 * 4096.0 * 4096 * 128);
}

TEST(PrefillAttention, ScratchHoldsThePlannedSplitsOrNothing) {
  // 2 heads × 16 query tiles = 32 blocks: up to 2048 / 32 = 64 splits planned, capped at 16 key tiles.
  const Shape small = shape(1, 2, 2, 1000, 64, false);
  const auto specs = prefill().tensors(small);
  EXPECT_EQ(specs[kPartialO].name, "partial_o");
  EXPECT_EQ(specs[kPartialO].access, kgate::Access::scratch);
  EXPECT_EQ(specs[kPartialO].count, 16u * 2 * 1000 * 64);
  EXPECT_EQ(specs[kPartialLse].count, 16u * 2 * 1000);
  EXPECT_EQ(plan::max_splits(32, 1000), 16);
  // Every benchmark shape has at least 4096 blocks of one split: no scratch.
  for (const Shape& s : prefill().bench_shapes()) {
    EXPECT_EQ(prefill().tensors(s)[kPartialO].count, 0u) << s.id();
    EXPECT_EQ(prefill().tensors(s)[kPartialLse].count, 0u) << s.id();
  }
  EXPECT_EQ(specs[kLse].dtype, DType::fp32);
  EXPECT_TRUE(specs[kLse].tolerance.has_value());
  EXPECT_FALSE(specs[kO].tolerance.has_value());
}

TEST(PrefillAttention, EveryShapeHasAZeroedTileCounter) {
  // fa3_pingpong's blocks claim work tiles from [0] and count themselves done in [1]; the check
  // requires both to read zero after every launch.
  for (const Shape& s : prefill().test_shapes()) {
    const auto specs = prefill().tensors(s);
    ASSERT_EQ(specs.size(), static_cast<std::size_t>(kTileSlots) + 1) << s.id();
    EXPECT_EQ(specs[kTileCounter].name, "tile_counter");
    EXPECT_EQ(specs[kTileCounter].access, kgate::Access::zeroed_scratch);
    EXPECT_EQ(specs[kTileCounter].dtype, DType::i32);
    EXPECT_EQ(specs[kTileCounter].count, 2u);
    // And a slot per block and Q buffer, which need not start zeroed.
    EXPECT_EQ(specs[kTileSlots].name, "tile_slots");
    EXPECT_EQ(specs[kTileSlots].access, kgate::Access::scratch);
    EXPECT_EQ(specs[kTileSlots].count, 1024u * 2);  // kMaxClaimingBlocks x Q buffers
  }
}

TEST(PrefillAttention, ZeroQueriesAverageTheVisibleValuesOfTheirKvHead) {
  // q = 0: every visible key scores 0, so o is the mean of the visible values and lse = ln(count).
  // Value (kv head g, key j) = g + j/8 in every column: query head h reads KV head h / 2.
  for (const bool causal : {false, true}) {
    const Shape s = shape(1, 4, 2, 5, 64, causal);
    HostTensors t = random_tensors(s, 7);
    std::fill(t[kQ].begin(), t[kQ].end(), 0.0);
    for (int g = 0; g < 2; ++g)
      for (int j = 0; j < 5; ++j)
        for (int e = 0; e < 64; ++e) t[kV][(g * 5 + j) * 64 + e] = g + j / 8.0;
    prefill().reference(s, t);
    for (int h = 0; h < 4; ++h)
      for (int i = 0; i < 5; ++i) {
        const int visible = causal ? i + 1 : 5;
        const double mean = h / 2 + (visible - 1) / 16.0;  // mean of j/8 over j < visible
        EXPECT_NEAR(t[kO][(h * 5 + i) * 64 + 17], mean, 1e-12) << "causal " << causal << " head " << h << " row " << i;
        EXPECT_NEAR(t[kLse][h * 5 + i], std::log(visible), 1e-12);
      }
  }
}

TEST(PrefillAttention, ACausalFirstRowIsItsOnlyKeysValue) {
  const Shape s = shape(1, 1, 1, 3, 64, true);
  HostTensors t = random_tensors(s, 9);
  prefill().reference(s, t);
  double dot = 0;
  for (int e = 0; e < 64; ++e) dot += t[kQ][e] * t[kK][e];
  EXPECT_NEAR(t[kLse][0], dot / 8, 1e-12);
  for (int e = 0; e < 64; ++e) EXPECT_DOUBLE_EQ(t[kO][e], t[kV][e]);
}

TEST(PrefillAttention, TheBaselineIsAStraightforwardBf16Implementation) {
  const HostTensors inputs = random_tensors(kFull, 3);
  HostTensors expected = inputs, baseline = inputs;
  prefill().reference(kFull, expected);
  ASSERT_TRUE(prefill().baseline(kFull, baseline));
  for (const double o : baseline[kO]) EXPECT_EQ(o, bf16(o));  // stored as bf16
  const kgate::BaselineError error = kgate::baseline_error(baseline[kO], expected[kO]);
  // bf16 scores and probabilities: off by more than one output rounding, far less than the output.
  EXPECT_GT(error.rel_l2, std::ldexp(1.0, -9));
  EXPECT_LT(error.rel_l2, 0.05);
}

TEST(PrefillAttention, AnFp32KernelPassesFlashAttentionsRule) {
  for (const Shape& s : {kCausal, kFull}) {
    const kgate::InstanceCheck fp32 = check_emulation(s, {});
    EXPECT_TRUE(fp32.passed()) << s.id() << "\n" << fp32.describe();
    const kgate::InstanceCheck tensor_core = check_emulation(s, {.round_probabilities = true});
    EXPECT_TRUE(tensor_core.passed()) << s.id() << "\n" << tensor_core.describe();
  }
}

TEST(PrefillAttention, PlantedBugsFail) {
  const kgate::InstanceCheck off_by_one = check_emulation(kCausal, {.causal_off_by_one = true});
  EXPECT_FALSE(off_by_one.tensors[0].passed()) << off_by_one.describe();
  EXPECT_FALSE(off_by_one.tensors[1].passed()) << off_by_one.describe();
  for (const Shape& s : {kCausal, kFull}) {
    const kgate::InstanceCheck no_scale = check_emulation(s, {.missing_scale = true});
    EXPECT_FALSE(no_scale.tensors[0].passed()) << s.id() << "\n" << no_scale.describe();
    const kgate::InstanceCheck log2 = check_emulation(s, {.lse_in_log2 = true});
    EXPECT_TRUE(log2.tensors[0].passed()) << s.id() << "\n" << log2.describe();
    EXPECT_FALSE(log2.tensors[1].passed()) << s.id() << "\n" << log2.describe();
  }
  // The keys past the first tile dropped: 64 of 130 seen.
  const kgate::InstanceCheck dropped = check_emulation(kFull, {.keys_seen = 64});
  EXPECT_FALSE(dropped.passed()) << dropped.describe();
  // One key of 130 dropped: whatever o's widened bound makes of it, the fp32 lse catches it.
  const kgate::InstanceCheck one_key = check_emulation(kFull, {.keys_seen = 129});
  EXPECT_FALSE(one_key.tensors[1].passed()) << one_key.describe();
}

TEST(PrefillAttention, LongShapesTakeNaiveAsTheReferenceWithAWiderFloor) {
  const Shape short_shape = shape(1, 4, 2, 1000, 128, false), long_shape = shape(1, 2, 1, 4096, 128, true);
  EXPECT_FALSE(prefill().device_reference(short_shape).has_value());
  EXPECT_EQ(prefill().device_reference(long_shape), "naive");
  EXPECT_EQ(kgate::Registry::instance().device_reference(prefill(), long_shape),
            kgate::Registry::instance().find_variant("prefill_attention/naive"));
  EXPECT_DOUBLE_EQ(prefill().tolerance(short_shape).abs_floor, std::ldexp(1.0, -16));
  EXPECT_DOUBLE_EQ(prefill().tolerance(long_shape).abs_floor, std::ldexp(1.0, -9));
  EXPECT_EQ(prefill().tolerance(long_shape).max_ulps, 2);
}

TEST(PrefillSplitPlan, OneSplitOnceTheGridFillsAWave) {
  EXPECT_EQ(plan::plan_splits(4096, 4096, 264), 1);
  EXPECT_EQ(plan::plan_splits(264, 4096, 264), 1);
  EXPECT_EQ(plan::plan_splits(32, 1000, 264), 9);       // ceil(264 / 32), below 16 key tiles
  EXPECT_EQ(plan::plan_splits(2, 1000, 264), 16);       // capped at the key tiles
  EXPECT_EQ(plan::plan_splits(2, 17, 264), 1);          // one key tile
  EXPECT_EQ(plan::plan_splits(1, 16384, 100000), 256);  // planning caps the device at kMaxResidentBlocks
  // Never more splits on a smaller device: the family's capacity bounds every plan.
  for (const std::int64_t base : {1, 3, 32, 100, 2047, 5000})
    for (const int s : {17, 1000, 16384}) {
      int previous = 1;
      for (std::int64_t resident = 1; resident <= 4096; resident += 37) {
        const int splits = plan::plan_splits(base, s, resident);
        EXPECT_GE(splits, previous);
        EXPECT_LE(splits, plan::max_splits(base, s));
        previous = splits;
      }
    }
}

TEST(PrefillSplitPlan, PiecesCoverEachQueryTilesKeyTilesOnce) {
  for (const int s : {17, 64, 65, 1000, 4096})
    for (const bool causal : {false, true})
      for (const int splits : {1, 2, 3, 7, 16, 64}) {
        for (int tile = 0; tile < plan::query_tiles(s); ++tile) {
          const int key_tiles = plan::key_tiles(s, causal, tile);
          EXPECT_EQ(key_tiles, causal ? std::min(tile + 1, plan::query_tiles(s)) : plan::query_tiles(s));
          const int per = plan::tiles_per_piece(s, causal, tile, splits), used = plan::used_pieces(s, causal, tile, splits);
          EXPECT_LE(used, splits);
          // Pieces [p·per, min((p+1)·per, key_tiles)) for p < used: contiguous, non-empty, complete.
          EXPECT_LT((used - 1) * per, key_tiles) << s << " " << causal << " " << splits << " " << tile;
          EXPECT_GE(used * per, key_tiles);
        }
      }
}
