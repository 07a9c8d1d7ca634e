#include "kgate/report/svg.hpp"

#include <algorithm>

#include "kgate/base/text.hpp"

namespace kgate::report {
namespace {

// Faces found on every desktop, then the generic family: the same look in browsers and GitHub.
constexpr const char* kSans = "Helvetica, Arial, sans-serif";
constexpr const char* kMono = "Menlo, Consolas, 'DejaVu Sans Mono', monospace";

std::string number(double value) {
  std::string s = printf_string("%.1f", value);
  if (s.ends_with(".0")) s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

std::string attributes(const Style& style) {
  std::string out = " fill=\"" + style.fill + "\" stroke=\"" + style.stroke + "\"";
  if (style.stroke != "none") out += " stroke-width=\"" + number(style.stroke_width) + "\"";
  if (!style.dash.empty()) out += " stroke-dasharray=\"" + style.dash + "\"";
  if (style.opacity < 1) out += " opacity=\"" + std::to_string(style.opacity).substr(0, 4) + "\"";
  return out;
}

// A shape with an optional tooltip: <title> as its child, which browsers show on hover.
std::string element(const std::string& open, std::string_view tooltip) {
  if (tooltip.empty()) return open + "/>\n";
  return open + "><title>" + xml_escape(tooltip) + "</title></" + open.substr(1, open.find(' ') - 1) + ">\n";
}

}  // namespace

Svg::Svg(double width, double height) : width_(width), height_(height) {
  // An opaque background: on a dark page (GitHub's dark theme) dark text stays readable.
  rect(0, 0, width, height, {.fill = "#ffffff"});
}

void Svg::rect(double x, double y, double width, double height, const Style& style, std::string_view tooltip) {
  body_ += element("<rect x=\"" + number(x) + "\" y=\"" + number(y) + "\" width=\"" + number(std::max(width, 0.0)) + "\" height=\"" +
                       number(std::max(height, 0.0)) + "\"" + attributes(style),
                   tooltip);
}

void Svg::line(double x1, double y1, double x2, double y2, const Style& style) {
  body_ += "<line x1=\"" + number(x1) + "\" y1=\"" + number(y1) + "\" x2=\"" + number(x2) + "\" y2=\"" + number(y2) + "\"" +
           attributes(style) + "/>\n";
}

void Svg::polyline(const std::vector<std::pair<double, double>>& points, const Style& style) {
  std::string list;
  for (const auto& [x, y] : points) {
    if (!list.empty()) list += ' ';
    list += number(x);
    list += ',';
    list += number(y);
  }
  body_ += "<polyline points=\"" + list + "\"" + attributes(style) + "/>\n";
}

void Svg::marker(Marker shape, double x, double y, double size, const Style& style, std::string_view tooltip) {
  const double r = size / 2;
  switch (shape) {
    case Marker::circle:
      body_ += element("<circle cx=\"" + number(x) + "\" cy=\"" + number(y) + "\" r=\"" + number(r) + "\"" + attributes(style), tooltip);
      return;
    case Marker::square: rect(x - r, y - r, size, size, style, tooltip); return;
    case Marker::triangle:
      body_ += element("<polygon points=\"" + number(x) + "," + number(y - r * 1.15) + " " + number(x - r * 1.1) + "," +
                           number(y + r * 0.85) + " " + number(x + r * 1.1) + "," + number(y + r * 0.85) + "\"" + attributes(style),
                       tooltip);
      return;
    case Marker::diamond:
      body_ += element("<polygon points=\"" + number(x) + "," + number(y - r * 1.3) + " " + number(x + r * 1.1) + "," + number(y) + " " +
                           number(x) + "," + number(y + r * 1.3) + " " + number(x - r * 1.1) + "," + number(y) + "\"" + attributes(style),
                       tooltip);
      return;
  }
}

void Svg::text(double x, double y, std::string_view content, const TextStyle& style) {
  static constexpr const char* kAnchors[] = {"start", "middle", "end"};
  std::string open = "<text x=\"" + number(x) + "\" y=\"" + number(y) + "\" font-size=\"" + number(style.size) + "\"";
  open += std::string(" font-family=\"") + (style.monospace ? kMono : kSans) + "\"";
  open += std::string(" text-anchor=\"") + kAnchors[static_cast<int>(style.anchor)] + "\" fill=\"" + style.fill + "\"";
  if (style.bold) open += " font-weight=\"bold\"";
  if (style.rotate != 0) open += " transform=\"rotate(" + number(style.rotate) + " " + number(x) + " " + number(y) + ")\"";
  body_ += open + ">" + xml_escape(content) + "</text>\n";
}

std::string Svg::str() const {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + number(width_) + "\" height=\"" + number(height_) + "\" viewBox=\"0 0 " +
         number(width_) + " " + number(height_) + "\">\n" + body_ + "</svg>\n";
}

double Svg::text_width(std::string_view content, double size, bool monospace) {
  std::size_t characters = 0;
  for (const char c : content) characters += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // UTF-8 lead bytes
  return static_cast<double>(characters) * size * (monospace ? 0.6 : 0.55);
}

}  // namespace kgate::report
