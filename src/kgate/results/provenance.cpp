#include "kgate/results/provenance.hpp"

#include <unistd.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <regex>

namespace kgate {
namespace {

std::string run_command(const std::string& command) {
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::array<char, 256> buffer;
    while (fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
    if (pclose(pipe) != 0) return {};
  }
  while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
  return out;
}

std::string format_iso8601_utc(std::time_t time) {
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace

std::string utc_now_iso8601() { return format_iso8601_utc(std::chrono::system_clock::to_time_t(std::chrono::system_clock::now())); }

std::optional<std::string> iso8601_utc(std::string_view date) {
  static const std::regex kDate(R"((\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?)?(Z|([+-])(\d{2}):?(\d{2}))?)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(date.begin(), date.end(), m, kDate)) return std::nullopt;
  const auto field = [&](int i) { return m[i].matched ? std::stoi(m[i].str()) : 0; };
  using namespace std::chrono;
  const year_month_day day{year{field(1)}, month{static_cast<unsigned>(field(2))}, std::chrono::day{static_cast<unsigned>(field(3))}};
  const int hour = field(4), minute = field(5), second = field(6);
  const int offset_minutes = (m[8].matched && m[8].str() == "-" ? -1 : 1) * (field(9) * 60 + field(10));
  if (!day.ok() || hour > 23 || minute > 59 || second > 60 || field(9) > 23 || field(10) > 59) return std::nullopt;
  const sys_seconds time = sys_days{day} + hours{hour} + minutes{minute - offset_minutes} + seconds{second};
  return format_iso8601_utc(system_clock::to_time_t(time));
}

std::string gpu_slug(const std::string& gpu_name) {
  std::string slug;
  for (char c : gpu_name) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      slug += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!slug.empty() && slug.back() != '-') {
      slug += '-';
    }
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "unknown-gpu" : slug;
}

std::string compact_date(std::string iso8601) {
  std::erase_if(iso8601, [](char c) { return c == '-' || c == ':'; });
  return iso8601;
}

std::string run_file_name(const RunContext& run) { return compact_date(run.date) + "-" + gpu_slug(run.gpu_name) + ".json"; }

RunContext make_run_context(const DeviceInfo& device, const SuiteBuild& suite, const std::string& command_line) {
  RunContext c;
  c.suite = suite.name;
  c.gpu_name = device.name;
  c.gpu_uuid = device.uuid;
  c.compute_capability = device.compute_capability;
  c.sm_count = device.sm_count;
  c.l2_bytes = static_cast<long long>(device.l2_bytes);
  c.memory_bytes = static_cast<long long>(device.global_memory_bytes);
  c.driver_version = device.driver_version;
  c.runtime_version = device.runtime_version;
  c.sm_clock_mhz_default = device.sm_clock_khz / 1e3;
  c.memory_clock_mhz = device.memory_clock_khz / 1e3;
  // KGATE_GIT_COMMIT names the commit where the tree has no .git (a CI artifact, a copied tree).
  const char* given = std::getenv("KGATE_GIT_COMMIT");
  const std::string git = "git -C '" + suite.source_dir + "' ";
  c.git_commit = given && *given ? given : run_command(git + "rev-parse HEAD 2>/dev/null");
  if (c.git_commit.empty()) c.git_commit = "unknown";
  c.git_dirty = !(given && *given) && !run_command(git + "status --porcelain --untracked-files=no 2>/dev/null").empty();
  c.build_type = suite.build_type;
  c.cuda_architectures = suite.cuda_architectures;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  c.host = host;
  c.date = utc_now_iso8601();
  c.command_line = command_line;
  return c;
}

}  // namespace kgate
