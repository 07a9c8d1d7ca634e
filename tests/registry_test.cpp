#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/row_plan.hpp"
#include "kernels/gemv/gemv_plan.hpp"
#include "kgate/core/registry.hpp"

namespace {

struct ToyArgs {
  float* out;
};

class ToyFamily final : public kgate::TypedFamily<ToyArgs> {
 public:
  static constexpr const char* kName = "toy";
  std::string name() const override { return kName; }
  std::string description() const override { return "a family for registry tests"; }
  std::vector<kgate::Shape> test_shapes() const override { return {kgate::Shape({{"n", 3}}, kgate::DType::fp32)}; }
  std::vector<kgate::Shape> bench_shapes() const override { return test_shapes(); }
  std::vector<kgate::TensorSpec> tensors(const kgate::Shape& s) const override {
    return {{.name = "out", .dtype = kgate::DType::fp32, .count = static_cast<std::size_t>(s.at("n")), .access = kgate::Access::output}};
  }
  double min_bytes(const kgate::Shape& s) const override { return 4.0 * s.at("n"); }
  double flops(const kgate::Shape&) const override { return 0; }
  void reference(const kgate::Shape&, kgate::HostTensors&) const override {}
  ToyArgs make_args(const kgate::Shape&, const kgate::TensorViews& v) const override { return {v.get<float>(0)}; }
};

void toy_launch(const ToyArgs&, cudaStream_t) {}

kgate::Variant toy_variant(std::string name, kgate::VariantRole role = kgate::VariantRole::candidate, std::string follows = "") {
  kgate::VariantInfo info;
  info.name = std::move(name);
  info.description = "d";
  info.role = role;
  info.follows = std::move(follows);
  return kgate::make_variant<ToyFamily>(std::move(info), toy_launch);
}

}  // namespace

// A family's candidates are listed in the order of its journey (each after the one it follows),
// not by name: the report's journey line and roofline steps read them in that order.
TEST(Registry, CandidatesFollowTheirJourney) {
  kgate::Registry r;
  r.add_family(std::make_unique<ToyFamily>());
  r.add_variant(toy_variant("a_third", kgate::VariantRole::candidate, "z_second"));
  r.add_variant(toy_variant("naive", kgate::VariantRole::reference));
  r.add_variant(toy_variant("z_second", kgate::VariantRole::candidate, "m_first"));
  r.add_variant(toy_variant("m_first", kgate::VariantRole::candidate, "naive"));
  r.add_variant(toy_variant("b_alone"));
  EXPECT_NO_THROW(r.validate());
  std::vector<std::string> order;
  for (const kgate::Variant* v : r.variants_of("toy")) order.push_back(v->info.name);
  EXPECT_EQ(order, (std::vector<std::string>{"naive", "b_alone", "m_first", "z_second", "a_third"}));
}

TEST(Registry, ValidationRejectsJourneysThatLeadNowhereOrInACircle) {
  kgate::Registry r;
  r.add_family(std::make_unique<ToyFamily>());
  r.add_variant(toy_variant("lost", kgate::VariantRole::candidate, "missing"));
  r.add_variant(toy_variant("x", kgate::VariantRole::candidate, "y"));
  r.add_variant(toy_variant("y", kgate::VariantRole::candidate, "x"));
  try {
    r.validate();
    FAIL() << "expected validate() to throw";
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'toy/lost' follows 'missing', which is not a variant of its family"), std::string::npos) << what;
    EXPECT_NE(what.find("'toy/x' follows a chain of variants that goes in a circle"), std::string::npos) << what;
    EXPECT_NE(what.find("'toy/y' follows a chain of variants that goes in a circle"), std::string::npos) << what;
  }
  EXPECT_EQ(r.variants_of("toy").size(), 3u);  // listing a broken registry still terminates
}

TEST(Registry, ValidRegistryPassesValidation) {
  kgate::Registry r;
  r.add_family(std::make_unique<ToyFamily>());
  r.add_variant(toy_variant("b"));
  r.add_variant(toy_variant("a", kgate::VariantRole::reference));
  EXPECT_NO_THROW(r.validate());
  const auto variants = r.variants_of("toy");
  ASSERT_EQ(variants.size(), 2u);
  EXPECT_EQ(variants[0]->info.name, "a");  // the reference comes first
  EXPECT_EQ(variants[0]->info.full_name(), "toy/a");
  EXPECT_EQ(r.find_variant("toy/b"), variants[1]);
  EXPECT_EQ(r.find_variant("toy/c"), nullptr);
}

TEST(Registry, ValidationListsEveryProblem) {
  kgate::Registry r;
  r.add_family(std::make_unique<ToyFamily>());
  r.add_variant(toy_variant("dup"));
  r.add_variant(toy_variant("dup"));
  r.add_variant(toy_variant("bad/name"));
  r.add_variant(toy_variant("r1", kgate::VariantRole::reference));
  r.add_variant(toy_variant("r2", kgate::VariantRole::reference));
  kgate::Variant orphan = toy_variant("orphan");
  orphan.info.family = "nosuchfamily";
  r.add_variant(orphan);
  try {
    r.validate();
    FAIL() << "expected validate() to throw";
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'toy/dup' registered twice"), std::string::npos) << what;
    EXPECT_NE(what.find("bad/name"), std::string::npos) << what;
    EXPECT_NE(what.find("more than one reference"), std::string::npos) << what;
    EXPECT_NE(what.find("unknown family 'nosuchfamily'"), std::string::npos) << what;
  }
}

// The real registry, as linked into every kgate binary.
TEST(Registry, EveryFamilyIsCompleteAndConsistent) {
  const kgate::Registry& r = kgate::Registry::instance();
  ASSERT_NO_THROW(r.validate());
  std::set<std::string> names;
  for (const kgate::Family* family : r.families()) {
    names.insert(family->name());
    SCOPED_TRACE(family->name());
    const auto variants = r.variants_of(family->name());
    EXPECT_GE(variants.size(), 2u) << "a family needs a reference and at least one other variant";
    EXPECT_EQ(std::count_if(variants.begin(), variants.end(),
                            [](const kgate::Variant* v) { return v->info.role == kgate::VariantRole::reference; }),
              1);
    EXPECT_FALSE(family->test_shapes().empty());
    EXPECT_FALSE(family->bench_shapes().empty());
    std::set<std::string> ids;
    for (const auto& shapes : {family->test_shapes(), family->bench_shapes()}) {
      for (const kgate::Shape& s : shapes) {
        EXPECT_GT(family->min_bytes(s), 0) << s.id();
        EXPECT_GE(family->flops(s), 0) << s.id();
        std::size_t checked = 0;
        for (const auto& t : family->tensors(s)) checked += t.access != kgate::Access::input;
        EXPECT_GT(checked, 0u) << s.id() << ": nothing to check";
      }
    }
    for (const kgate::Shape& s : family->bench_shapes()) EXPECT_TRUE(ids.insert(s.id()).second) << "duplicate " << s.id();
    for (const kgate::Variant* v : variants) {
      EXPECT_FALSE(v->info.description.empty()) << v->info.full_name();
      EXPECT_NE(v->info.source_file.find(".cu"), std::string::npos) << v->info.full_name();
    }
  }
  EXPECT_TRUE(names.count("rmsnorm"));
  EXPECT_TRUE(names.count("fused_add_rmsnorm"));
}

TEST(Registry, NormTestShapesCoverEveryVectorWidthAndOddSizes) {
  const kgate::Family* family = kgate::Registry::instance().find_family("rmsnorm");
  ASSERT_NE(family, nullptr);
  std::set<int> widths, per_thread;
  bool odd = false;
  for (const kgate::Shape& s : family->test_shapes()) {
    const auto plan = kgate::kernels::plan_row(s.at("n"));
    widths.insert(plan.vec);
    per_thread.insert(plan.per_thread);
    odd |= s.at("n") % 2 == 1;
  }
  EXPECT_EQ(widths, (std::set<int>{1, 2, 4, 8}));
  EXPECT_TRUE(odd);
  EXPECT_GE(per_thread.size(), 3u);
}

TEST(RowPlan, PicksTheWidestVectorAndFewestVectorsPerThread) {
  using kgate::kernels::plan_row;
  auto p = plan_row(4096);
  EXPECT_EQ(p.vec, 8);
  EXPECT_EQ(p.per_thread, 1);
  EXPECT_EQ(p.threads, 512);
  p = plan_row(1000);  // 125 vectors: rounded up to a whole warp
  EXPECT_EQ(p.vec, 8);
  EXPECT_EQ(p.threads, 128);
  p = plan_row(4097);
  EXPECT_EQ(p.vec, 1);
  EXPECT_EQ(p.per_thread, 16);
  EXPECT_EQ(p.threads, 288);
  p = plan_row(32768);  // 4096 vectors of 8: 8 per thread at 512 threads (64 values each)
  EXPECT_EQ(p.per_thread, 8);
  EXPECT_EQ(p.threads, 512);
  p = plan_row(16383);  // odd: 16 single values per thread, 1024 threads
  EXPECT_EQ(p.vec, 1);
  EXPECT_EQ(p.per_thread, 16);
  EXPECT_EQ(p.threads, 1024);
  EXPECT_THROW(plan_row(32776), kgate::UnsupportedShape);
  EXPECT_THROW(plan_row(16385), kgate::UnsupportedShape);
  for (std::int64_t n = 1; n <= 32768; n += 37) {
    try {
      p = plan_row(n);
    } catch (const kgate::UnsupportedShape&) {
      continue;
    }
    EXPECT_LE(p.per_thread * p.vec, kgate::kernels::kMaxRowFloats) << n;
    EXPECT_LE(p.threads, p.per_thread * p.vec >= 32 ? 512 : 1024) << n;
    EXPECT_GE(std::int64_t(p.threads) * p.per_thread * p.vec, n) << n;
  }
}

// dispatch_vector_width launches the widest vector that divides n, or max_width where that is
// narrower (silu_and_mul/flat's 8-byte vectors below 8 MB of output).
TEST(RowPlan, DispatchesTheWidestVectorUpToTheLimit) {
  using kgate::kernels::dispatch_vector_width;
  auto width = [](std::int64_t n, int max_width) {
    int launched = 0;
    dispatch_vector_width(
        n, [&]<int VEC>() { launched = VEC; }, max_width);
    return launched;
  };
  EXPECT_EQ(width(14336, 8), 8);
  EXPECT_EQ(width(14336, 4), 4);
  EXPECT_EQ(width(1004, 8), 4);  // 1004 = 4 · 251
  EXPECT_EQ(width(1004, 4), 4);
  EXPECT_EQ(width(1002, 4), 2);
  EXPECT_EQ(width(1001, 4), 1);
  EXPECT_EQ(width(4096, 1), 1);
}

// The weight_first variants' geometries (rmsnorm, fused_add_rmsnorm): at least min_per_thread
// vectors per thread where the row allows, and a register limit that fits the largest block.
TEST(RowPlan, StartsAtTheMinimumVectorsPerThread) {
  using kgate::kernels::plan_row;
  auto p = plan_row(4096, 2);  // Liger's geometry at n = 4096: 256 threads of 16 values
  EXPECT_EQ(p.vec, 8);
  EXPECT_EQ(p.per_thread, 2);
  EXPECT_EQ(p.threads, 256);
  p = plan_row(4096, 4);
  EXPECT_EQ(p.per_thread, 4);
  EXPECT_EQ(p.threads, 128);
  p = plan_row(8192, 2);  // what plan_row(8192) picks anyway: 1024 one-vector threads would be too many
  EXPECT_EQ(p.per_thread, 2);
  EXPECT_EQ(p.threads, 512);
  EXPECT_EQ(plan_row(8192).per_thread, 2);
  p = plan_row(32000, 4);  // 4000 vectors: four each would need 1000 threads of 32 values
  EXPECT_EQ(p.per_thread, 8);
  EXPECT_EQ(p.threads, 512);
  p = plan_row(9999, 4);  // odd: 16 single values per thread, past 512 threads
  EXPECT_EQ(p.vec, 1);
  EXPECT_EQ(p.per_thread, 16);
  EXPECT_EQ(p.threads, 640);
  for (int min_per_thread : {1, 2, 4}) {
    for (std::int64_t n = 1; n <= 32768; n += 37) {
      try {
        p = plan_row(n, min_per_thread);
      } catch (const kgate::UnsupportedShape&) {
        continue;
      }
      EXPECT_GE(p.per_thread, min_per_thread) << n;
      EXPECT_LE(p.threads, kgate::kernels::row_thread_limit(p.vec, p.per_thread)) << n;
      EXPECT_LE(p.threads * kgate::kernels::row_register_limit(p.vec, p.per_thread), 65536) << n;
      EXPECT_GE(std::int64_t(p.threads) * p.per_thread * p.vec, n) << n;
    }
  }
  // Three blocks of 512 threads per SM where a thread holds two 16-byte vectors (n = 8192).
  EXPECT_LE(3 * 512 * kgate::kernels::row_register_limit(8, 2), 65536);
}

// gemv/vectorized's tiles per block on 132 SMs, at the bench's projections (n / 16 tiles).
TEST(GemvPlan, TakesTheMostTilesThatLeaveEverySmABlockAboveEightRows) {
  using kgate::kernels::gemv_tiles_per_block;
  for (int m : {1, 4, 8}) EXPECT_EQ(gemv_tiles_per_block(m, 1792, 132), 1) << "m " << m;
  EXPECT_EQ(gemv_tiles_per_block(16, 1792, 132), 4);  // n 28672: capped at 4
  EXPECT_EQ(gemv_tiles_per_block(16, 384, 132), 2);   // n 6144: 192 blocks; 4 would leave 96
  EXPECT_EQ(gemv_tiles_per_block(9, 256, 132), 1);    // n 4096: 2 would leave 128 blocks
  EXPECT_EQ(gemv_tiles_per_block(16, 264, 132), 2);   // exactly one block per SM at 2
  EXPECT_EQ(gemv_tiles_per_block(16, 3, 132), 1);
}
