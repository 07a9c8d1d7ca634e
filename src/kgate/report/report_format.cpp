#include "kgate/report/format.hpp"

#include <algorithm>
#include <cmath>

#include "kgate/base/text.hpp"

namespace kgate::report {
namespace {

constexpr std::size_t kMaxTemplateArguments = 24;  // longer argument lists become <…>
constexpr std::size_t kMaxShortName = 48;

std::string with_unit(double value, const char* unit) { return sig3(value) + " " + unit; }

// The positions of `text` outside any <...> and (...) other than "(anonymous namespace)", where
// `wanted` starts.
std::size_t find_top_level(std::string_view text, std::string_view wanted, bool last) {
  int angle = 0;
  std::size_t found = std::string_view::npos;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i).starts_with("(anonymous namespace)")) {
      i += std::string_view("(anonymous namespace)").size() - 1;
      continue;
    }
    const char c = text[i];
    if (angle == 0 && text.substr(i).starts_with(wanted)) {
      found = i;
      if (!last) return found;
    }
    if (c == '<') ++angle;
    else if (c == '>' && angle > 0) --angle;
  }
  return found;
}

}  // namespace

std::string format_counter_pct(double percent) { return format_pct(percent) + (percent > 100 ? " ⚠" : ""); }

std::string format_job_phases(const std::vector<JobPhase>& job) {
  if (job.empty()) return "";
  std::string parts;
  for (const JobPhase& p : job) parts += (parts.empty() ? "" : ", ") + p.phase + " " + format_time(p.seconds);
  return format_time(job_total_s(job)) + ": " + parts;
}

std::string format_bytes(double bytes) {
  if (bytes >= 1024.0 * 1024 * 1024) return with_unit(bytes / (1024.0 * 1024 * 1024), "GiB");
  if (bytes >= 1024.0 * 1024) return with_unit(bytes / (1024.0 * 1024), "MiB");
  if (bytes >= 1024) return with_unit(bytes / 1024, "KiB");
  return printf_string("%.0f B", bytes);
}

std::string format_dims(const int (&dims)[3]) {
  return std::to_string(dims[0]) + "×" + std::to_string(dims[1]) + "×" + std::to_string(dims[2]);
}

std::string code(std::string_view name) {
  std::string text(1, '`');
  text += literal(name);
  return text += '`';
}

std::string full_kernel_name(const KernelRecord& kernel) { return kernel.demangled.empty() ? kernel.name : kernel.demangled; }

std::string short_kernel_name(const KernelRecord& kernel) {
  std::string name = full_kernel_name(kernel);
  if (kernel.demangled.empty()) return name.size() > kMaxShortName ? name.substr(0, kMaxShortName - 1) + "…" : name;
  if (const std::size_t params = find_top_level(name, "(", false); params != std::string::npos && params > 0) name.erase(params);
  if (const std::size_t space = find_top_level(name, " ", true); space != std::string::npos) name.erase(0, space + 1);
  if (const std::size_t scope = find_top_level(name, "::", true); scope != std::string::npos) name.erase(0, scope + 2);
  if (const std::size_t open = name.find('<'); open != std::string::npos && name.size() - open - 2 > kMaxTemplateArguments)
    name = name.substr(0, open) + "<…>";
  return name.size() > kMaxShortName ? name.substr(0, kMaxShortName - 1) + "…" : name;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " and " : ", ";
    out += words[i];
  }
  return out;
}

std::string plural(std::size_t n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

}  // namespace kgate::report
