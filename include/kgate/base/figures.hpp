#pragma once
// How kgate prints a figure: times, ratios, percentages, changes and intervals, in one place, so
// `kgate compare`'s table, its Markdown, the report's Markdown, HTML and terminal text print the
// same figure the same way. Three significant digits everywhere; × and µs, or x and us where the
// output must be plain ASCII (Glyphs::ascii: a log that is not UTF-8, KGATE_ASCII=1).
#include <string>
#include <string_view>

namespace kgate {

enum class Glyphs { unicode, ascii };

// Three significant digits, trailing zeros kept so a column reads evenly: 1979, 151, 46.0, 4.60,
// 1.00, 0.943, 0.0584. Whole numbers from 1000 up; "-" when not finite.
std::string sig3(double value);

// format_time and format_ratio have a one-argument overload (Unicode) besides the one with glyphs,
// so that either can be passed where a std::string(*)(double) is taken.
std::string format_time(double seconds, Glyphs glyphs);  // "17.5 µs", "1.11 ms", "-" when not positive
std::string format_time(double seconds);
std::string format_time_change(double seconds, Glyphs glyphs = Glyphs::unicode);  // "+5.52 µs", "−130 ns", "±0 ns"
std::string format_ratio(double ratio, Glyphs glyphs);                            // "0.943×", "12.3×", "-" when not positive
std::string format_ratio(double ratio);
std::string format_percent(double percent);  // "46.0%", "1.35%", "0.0584%"
// A relative change given as a fraction, signed: +0.057 -> "+5.70%", -0.05 -> "−5.00%".
std::string format_change(double fraction, Glyphs glyphs = Glyphs::unicode);
// The change in time that a speedup (baseline / new) stands for: 0.943 -> "+6.04%" (slower).
std::string format_time_change_of_speedup(double speedup, Glyphs glyphs = Glyphs::unicode);
// "≥1.35%": the smallest change a comparison can detect, given as a fraction; "-" when 0.
std::string format_detectable(double fraction, Glyphs glyphs = Glyphs::unicode);
// "0.942–0.944": both ends with three significant digits, widened digit by digit until the ends
// differ ("0.9425–0.9431"), so an interval never reads as a single value; "-" when not positive.
std::string format_interval(double low, double high, Glyphs glyphs = Glyphs::unicode);
// An interval of times in the unit of its upper end, widened as format_interval's: "24.16–24.19 µs".
std::string format_time_interval(double low_s, double high_s, Glyphs glyphs = Glyphs::unicode);
// A significance test's p-value: three significant digits, "<0.001" below that, "-" when not finite.
std::string format_p_value(double p);
std::string format_bandwidth(double bytes_per_s);  // "2712 GB/s"
std::string format_flops(double flops_per_s);      // "1.97 TFLOP/s", "842 GFLOP/s", "3.10 MFLOP/s"
std::string format_mhz(double mhz);                // "1980 MHz", "-" when unknown (not positive)
std::string format_cuda_version(int version);      // cudaDriverGetVersion's 13000 -> "13.0", "-" when unknown

// `text` (a note, a summary built from the functions above) with their glyphs in the style asked:
// for Glyphs::ascii × -> x, µ -> u, −, – and — -> -, → -> "->", ≥ -> ">=", ≤ -> "<=", ± -> "+-",
// … -> "...", Δ -> "delta"; unchanged for Glyphs::unicode. Text stored once with Unicode glyphs (a comparison's
// notes) is shown in plain ASCII this way.
std::string with_glyphs(std::string_view text, Glyphs glyphs);

// Glyphs::ascii when KGATE_ASCII is set to anything but 0, else Glyphs::unicode.
Glyphs glyphs_from_environment();

}  // namespace kgate
