// The bytes/FLOP models and the fp64 references of the registered families, checked against
// values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "kgate/core/registry.hpp"

namespace {

const kgate::Family& family(const char* name) {
  const kgate::Family* f = kgate::Registry::instance().find_family(name);
  if (!f) throw std::runtime_error(std::string("family not registered: ") + name);
  return *f;
}

kgate::Shape rows(std::int64_t m, std::int64_t n) { return kgate::Shape({{"m", m}, {"n", n}}, kgate::DType::bf16); }

}  // namespace

TEST(Models, RmsNormBytesAndFlops) {
  const auto& f = family("rmsnorm");
  // 2·M·N·2 + 2·N: x read and y written once, weight read once.
  EXPECT_DOUBLE_EQ(f.min_bytes(rows(4096, 4096)), 2.0 * 4096 * 4096 * 2 + 2 * 4096);
  EXPECT_DOUBLE_EQ(f.min_bytes(rows(1, 8192)), 2.0 * 8192 * 2 + 2 * 8192);
  EXPECT_DOUBLE_EQ(f.flops(rows(3, 5)), 4.0 * 15);
}

TEST(Models, FusedAddRmsNormBytesAndFlops) {
  const auto& f = family("fused_add_rmsnorm");
  // 4·M·N·2 + 2·N: x and residual each read and written once, weight read once.
  EXPECT_DOUBLE_EQ(f.min_bytes(rows(4096, 4096)), 4.0 * 4096 * 4096 * 2 + 2 * 4096);
  EXPECT_DOUBLE_EQ(f.flops(rows(3, 5)), 5.0 * 15);
}

TEST(Models, TensorDeclarationsMatchTheBytesModel) {
  // Every declared tensor counted once (in-place tensors twice: read and written) is exactly the
  // minimum-bytes model for these families.
  for (const char* name : {"rmsnorm", "fused_add_rmsnorm"}) {
    const auto& f = family(name);
    for (const kgate::Shape& s : f.bench_shapes()) {
      double bytes = 0;
      for (const auto& t : f.tensors(s)) bytes += static_cast<double>(t.bytes()) * (t.access == kgate::Access::inout ? 2 : 1);
      EXPECT_DOUBLE_EQ(bytes, f.min_bytes(s)) << name << " " << s.id();
    }
  }
}

TEST(Models, RmsNormReferenceByHand) {
  // Row [3, 4]: mean of squares 12.5, rstd = 1/sqrt(12.5 + 1e-5).
  const auto& f = family("rmsnorm");
  kgate::HostTensors t = {{3.0, 4.0}, {1.0, 2.0}, {0.0, 0.0}};
  f.reference(rows(1, 2), t);
  const double rstd = 1.0 / std::sqrt(12.5 + 1e-5);
  EXPECT_NEAR(t[2][0], 3.0 * rstd * 1.0, 1e-12);
  EXPECT_NEAR(t[2][1], 4.0 * rstd * 2.0, 1e-12);
}

TEST(Models, FusedAddReferenceRoundsTheResidualAndNormalizesIt) {
  const auto& f = family("fused_add_rmsnorm");
  // x + r = 1 + 2^-9 is not a bf16 value: the stored residual is 1.0, and the norm must use it.
  const double tiny = std::ldexp(1.0, -9);
  kgate::HostTensors t = {{1.0, 2.0}, {tiny, 1.0}, {1.0, 1.0}};
  f.reference(rows(1, 2), t);
  EXPECT_EQ(t[1][0], 1.0);
  EXPECT_EQ(t[1][1], 3.0);
  const double rstd = 1.0 / std::sqrt((1.0 + 9.0) / 2 + 1e-5);
  EXPECT_NEAR(t[0][0], 1.0 * rstd, 1e-12);
  EXPECT_NEAR(t[0][1], 3.0 * rstd, 1e-12);
}
