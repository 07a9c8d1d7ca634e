#include "kgate/base/figures.hpp"

#include <gtest/gtest.h>

namespace kgate {
namespace {

TEST(Figures, ThreeSignificantDigitsWithTrailingZeros) {
  EXPECT_EQ(sig3(1979.4), "1979");
  EXPECT_EQ(sig3(151.2), "151");
  EXPECT_EQ(sig3(46), "46.0");
  EXPECT_EQ(sig3(4.6), "4.60");
  EXPECT_EQ(sig3(1), "1.00");
  EXPECT_EQ(sig3(0.94312), "0.943");
  EXPECT_EQ(sig3(0.058412), "0.0584");
  EXPECT_EQ(sig3(9.996), "10.0");  // rounded before the digits are counted
  EXPECT_EQ(sig3(-0.5), "-0.500");
  EXPECT_EQ(sig3(0), "0");
}

TEST(Figures, TimesInTheirUnitWithTheGlyphsAsked) {
  EXPECT_EQ(format_time(17.54e-6), "17.5 µs");
  EXPECT_EQ(format_time(17.54e-6, Glyphs::ascii), "17.5 us");
  EXPECT_EQ(format_time(812e-9), "812 ns");
  EXPECT_EQ(format_time(1.114e-3), "1.11 ms");
  EXPECT_EQ(format_time(2.5), "2.50 s");
  EXPECT_EQ(format_time(0), "-");
  EXPECT_EQ(format_time_change(5.52e-6), "+5.52 µs");
  EXPECT_EQ(format_time_change(-0.13e-6, Glyphs::ascii), "-130 ns");
  EXPECT_EQ(format_time_change(-0.13e-6), "−130 ns");
}

TEST(Figures, RatiosPercentagesAndChanges) {
  EXPECT_EQ(format_ratio(0.87812), "0.878×");
  EXPECT_EQ(format_ratio(0.87812, Glyphs::ascii), "0.878x");
  EXPECT_EQ(format_ratio(12.34), "12.3×");
  EXPECT_EQ(format_ratio(0), "-");
  EXPECT_EQ(format_percent(1.3456), "1.35%");
  EXPECT_EQ(format_percent(0.4), "0.400%");
  EXPECT_EQ(format_change(0.057), "+5.70%");
  EXPECT_EQ(format_change(-0.05), "−5.00%");
  EXPECT_EQ(format_change(-0.05, Glyphs::ascii), "-5.00%");
  EXPECT_EQ(format_time_change_of_speedup(1 / 1.06), "+6.00%");
  EXPECT_EQ(format_detectable(0.013456), "≥1.35%");
  EXPECT_EQ(format_detectable(0.013456, Glyphs::ascii), ">=1.35%");
  EXPECT_EQ(format_detectable(0), "-");
}

TEST(Figures, IntervalsWidenUntilTheirEndsDiffer) {
  EXPECT_EQ(format_interval(0.942, 0.944), "0.942–0.944");
  EXPECT_EQ(format_interval(1.1304, 1.1336), "1.130–1.134");
  EXPECT_EQ(format_interval(1.13041, 1.13049), "1.1304–1.1305");
  EXPECT_EQ(format_interval(0.9524, 0.9531, Glyphs::ascii), "0.952-0.953");
  EXPECT_EQ(format_interval(0.952411, 0.952419), "0.95241–0.95242");
  EXPECT_EQ(format_interval(0.95, 0.95), "0.950–0.950");  // a point: nothing to widen
  EXPECT_EQ(format_interval(0, 1), "-");
  EXPECT_EQ(format_time_interval(24.161e-6, 24.188e-6), "24.16–24.19 µs");
  EXPECT_EQ(format_time_interval(999e-9, 1.01e-6, Glyphs::ascii), "0.999-1.01 us");
  EXPECT_EQ(format_time_interval(0, 1e-6), "-");
}

TEST(Figures, PValuesRatesClocksAndVersions) {
  EXPECT_EQ(format_p_value(0.01234), "0.0123");
  EXPECT_EQ(format_p_value(0.5), "0.500");
  EXPECT_EQ(format_p_value(1e-290), "<0.001");
  EXPECT_EQ(format_bandwidth(2.7124e12), "2712 GB/s");
  EXPECT_EQ(format_flops(1.971e12), "1.97 TFLOP/s");
  EXPECT_EQ(format_flops(842e9), "842 GFLOP/s");
  EXPECT_EQ(format_mhz(1979.6), "1980 MHz");
  EXPECT_EQ(format_mhz(0), "-");
  EXPECT_EQ(format_cuda_version(13010), "13.1");
  EXPECT_EQ(format_cuda_version(0), "-");
}

TEST(Figures, GlyphsOfStoredTextInPlainAscii) {
  const std::string note = "clock 1980 MHz → 1755 MHz: time −5.00%, 0.952–0.953 ≥1.35% ± 0.0500% at 17.5 µs, 0.943× …";
  EXPECT_EQ(with_glyphs(note, Glyphs::unicode), note);
  EXPECT_EQ(with_glyphs(note, Glyphs::ascii),
            "clock 1980 MHz -> 1755 MHz: time -5.00%, 0.952-0.953 >=1.35% +- 0.0500% at 17.5 us, 0.943x ...");
  // Every figure's ASCII spelling is what with_glyphs makes of its Unicode one.
  EXPECT_EQ(with_glyphs(format_interval(0.9524, 0.9531), Glyphs::ascii), format_interval(0.9524, 0.9531, Glyphs::ascii));
  EXPECT_EQ(with_glyphs(format_time_change(-0.13e-6), Glyphs::ascii), format_time_change(-0.13e-6, Glyphs::ascii));
  EXPECT_EQ(with_glyphs(format_change(0), Glyphs::ascii), format_change(0, Glyphs::ascii));
}

}  // namespace
}  // namespace kgate
