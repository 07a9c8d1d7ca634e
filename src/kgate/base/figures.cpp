#include "kgate/base/figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "kgate/base/text.hpp"

namespace kgate {
namespace {

constexpr int kSignificantDigits = 3;
constexpr int kMaxIntervalDigits = 7;      // beyond this the ends of a ratio interval are the same number
constexpr double kSmallestShownP = 0.001;  // smaller p-values read "<0.001": the test's far tail is no more exact

struct AsciiGlyph {
  std::string_view unicode, ascii;
};
// The glyphs kgate's figures and notes use, and how plain ASCII spells them.
constexpr AsciiGlyph kAsciiGlyphs[] = {{"×", "x"},  {"µ", "u"},  {"−", "-"},  {"–", "-"},   {"—", "-"},    {"→", "->"},
                                       {"≥", ">="}, {"≤", "<="}, {"±", "+-"}, {"…", "..."}, {"Δ", "delta"}};

// `value` with `digits` significant digits, trailing zeros kept; whole numbers once the digits
// are all before the point.
std::string significant(double value, int digits) {
  if (!std::isfinite(value)) return "-";
  if (value == 0) return "0";
  // 1979, not 1980: whole numbers keep their digits.
  if (std::fabs(value) >= std::pow(10.0, digits)) return printf_string("%.0f", value);
  // Round first, so 9.996 counts as 10.0 and gets one decimal fewer.
  const double rounded = std::strtod(printf_string("%.*e", digits - 1, value).c_str(), nullptr);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(rounded))));
  return printf_string("%.*f", std::max(digits - 1 - magnitude, 0), rounded);
}

std::string_view minus(Glyphs glyphs) { return glyphs == Glyphs::ascii ? "-" : "−"; }

struct TimeUnit {
  double per_second;
  std::string_view name;
};

// The unit a time is printed in: ns below 1 µs, µs below 1 ms, ms below 1 s, else s.
TimeUnit time_unit(double seconds, Glyphs glyphs) {
  if (seconds < 1e-6) return {1e9, "ns"};
  if (seconds < 1e-3) return {1e6, glyphs == Glyphs::ascii ? "us" : "µs"};
  if (seconds < 1) return {1e3, "ms"};
  return {1, "s"};
}

}  // namespace

std::string sig3(double value) { return significant(value, kSignificantDigits); }

std::string format_time(double seconds, Glyphs glyphs) {
  if (!(seconds > 0) || !std::isfinite(seconds)) return "-";
  const TimeUnit unit = time_unit(seconds, glyphs);
  return sig3(seconds * unit.per_second) + " " + std::string(unit.name);
}

std::string format_time(double seconds) { return format_time(seconds, Glyphs::unicode); }

std::string format_time_change(double seconds, Glyphs glyphs) {
  if (!std::isfinite(seconds)) return "-";
  if (seconds == 0) return glyphs == Glyphs::ascii ? "+-0 ns" : "±0 ns";
  return std::string(seconds > 0 ? "+" : minus(glyphs)) + format_time(std::fabs(seconds), glyphs);
}

std::string format_ratio(double ratio, Glyphs glyphs) {
  if (!(ratio > 0) || !std::isfinite(ratio)) return "-";
  return sig3(ratio) + (glyphs == Glyphs::ascii ? "x" : "×");
}

std::string format_ratio(double ratio) { return format_ratio(ratio, Glyphs::unicode); }

std::string format_percent(double percent) { return std::isfinite(percent) ? sig3(percent) + "%" : "-"; }

std::string format_change(double fraction, Glyphs glyphs) {
  if (!std::isfinite(fraction)) return "-";
  if (fraction == 0) return glyphs == Glyphs::ascii ? "+-0%" : "±0%";
  return std::string(fraction > 0 ? "+" : minus(glyphs)) + format_percent(std::fabs(fraction) * 100);
}

std::string format_time_change_of_speedup(double speedup, Glyphs glyphs) {
  return speedup > 0 && std::isfinite(speedup) ? format_change(1 / speedup - 1, glyphs) : "-";
}

std::string format_detectable(double fraction, Glyphs glyphs) {
  if (!(fraction > 0) || !std::isfinite(fraction)) return "-";
  return (glyphs == Glyphs::ascii ? ">=" : "≥") + format_percent(fraction * 100);
}

std::string format_interval(double low, double high, Glyphs glyphs) {
  if (!(low > 0) || !(high > 0) || !std::isfinite(low) || !std::isfinite(high)) return "-";
  int digits = kSignificantDigits;
  while (low != high && digits < kMaxIntervalDigits && significant(low, digits) == significant(high, digits)) ++digits;
  return significant(low, digits) + (glyphs == Glyphs::ascii ? "-" : "–") + significant(high, digits);
}

std::string format_time_interval(double low_s, double high_s, Glyphs glyphs) {
  if (!(low_s > 0) || !std::isfinite(high_s)) return "-";
  const TimeUnit unit = time_unit(high_s, glyphs);
  return format_interval(low_s * unit.per_second, high_s * unit.per_second, glyphs) + " " + std::string(unit.name);
}

std::string format_p_value(double p) {
  if (!std::isfinite(p)) return "-";
  return p < kSmallestShownP ? "<0.001" : sig3(p);
}

std::string format_bandwidth(double bytes_per_s) { return sig3(bytes_per_s / 1e9) + " GB/s"; }

std::string format_flops(double flops_per_s) {
  if (flops_per_s >= 1e12) return sig3(flops_per_s / 1e12) + " TFLOP/s";
  if (flops_per_s >= 1e9) return sig3(flops_per_s / 1e9) + " GFLOP/s";
  return sig3(flops_per_s / 1e6) + " MFLOP/s";
}

std::string format_mhz(double mhz) {
  if (!(mhz > 0) || !std::isfinite(mhz)) return "-";
  return printf_string("%.0f MHz", mhz);
}

std::string format_cuda_version(int version) {
  if (version <= 0) return "-";
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string with_glyphs(std::string_view text, Glyphs glyphs) {
  if (glyphs == Glyphs::unicode) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto glyph = std::find_if(std::begin(kAsciiGlyphs), std::end(kAsciiGlyphs),
                                    [&](const AsciiGlyph& g) { return text.substr(i).starts_with(g.unicode); });
    if (glyph == std::end(kAsciiGlyphs)) {
      out += text[i++];
    } else {
      out += glyph->ascii;
      i += glyph->unicode.size();
    }
  }
  return out;
}

Glyphs glyphs_from_environment() {
  const char* ascii = std::getenv("KGATE_ASCII");
  return ascii && *ascii && std::string_view(ascii) != "0" ? Glyphs::ascii : Glyphs::unicode;
}

}  // namespace kgate
