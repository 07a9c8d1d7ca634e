#pragma once
// A tiny SVG writer for the charts of kgate's documents (the report's, the story's): shapes, text and tooltips, nothing else. The output
// is a standalone document (a file a browser or GitHub opens) that can also be inlined in HTML.
#include "kgate/base/escape.hpp"
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kgate::report {

// Escapes text for XML character data and attribute values, dropping the control characters XML
// forbids.

struct Style {
  std::string fill = "none";
  std::string stroke = "none";
  double stroke_width = 1;
  std::string dash{};  // stroke-dasharray, e.g. "4 3"
  double opacity = 1;
};

enum class Anchor { start, middle, end };

struct TextStyle {
  double size = 12;
  Anchor anchor = Anchor::start;
  std::string fill = "#222";
  bool bold = false;
  bool monospace = false;
  double rotate = 0;  // degrees, about the text's anchor point
};

enum class Marker { circle, square, triangle, diamond };

class Svg {
 public:
  Svg(double width, double height);

  void rect(double x, double y, double width, double height, const Style& style, std::string_view tooltip = {});
  void line(double x1, double y1, double x2, double y2, const Style& style);
  void polyline(const std::vector<std::pair<double, double>>& points, const Style& style);
  void marker(Marker shape, double x, double y, double size, const Style& style, std::string_view tooltip = {});
  void text(double x, double y, std::string_view content, const TextStyle& style = {});

  std::string str() const;

  // Width of `content` at `size`, for laying out labels: an estimate for the sans-serif face,
  // exact for the monospace one (0.6 em a character).
  static double text_width(std::string_view content, double size, bool monospace = false);

 private:
  double width_, height_;
  std::string body_;
};

}  // namespace kgate::report
