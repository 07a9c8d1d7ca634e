#pragma once
// Synthetic runs for the results I/O, comparator and CLI tests: timing samples drawn from a
// seeded normal distribution around a chosen median, so every planted change is known exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "kgate/results/results.hpp"
#include "kgate/base/statistics.hpp"

namespace kgate::synthetic {

struct Timing {
  double median_s = 10e-6;
  double rel_noise = 0.01;  // standard deviation relative to the median
  int samples = 60;
  double clock_mhz = 1980;  // 0 = unknown
  std::uint64_t seed = 1;
};

inline TimingRecord timing(const Timing& t) {
  std::mt19937_64 engine(t.seed);
  std::normal_distribution<double> noise(0.0, t.rel_noise);
  TimingRecord record;
  // Single precision, as CUDA events deliver and results files store them: round trips stay exact.
  for (int i = 0; i < t.samples; ++i) record.samples_s.push_back(static_cast<float>(t.median_s * std::max(0.5, 1.0 + noise(engine))));
  record.summary = summarize(record.samples_s);
  record.repetition_medians_s = {record.summary.median};  // one repetition, as one process records it
  record.target_met = true;
  record.target_rel_stddev = 0.02;
  record.stop_reason = "target-met";
  record.sm_clock_mhz = t.clock_mhz;
  record.gpu_time_s = record.summary.mean * t.samples;
  record.wall_time_s = 2 * record.gpu_time_s;
  return record;
}

inline BenchmarkRecord benchmark(const std::string& name, const Timing& t) {
  BenchmarkRecord r;
  r.name = name;
  r.family = name.substr(0, name.find('/'));
  const auto second = name.find('/', r.family.size() + 1);
  r.variant = name.substr(r.family.size() + 1, second - r.family.size() - 1);
  r.shape = second == std::string::npos ? "" : name.substr(second + 1);
  r.role = "candidate";
  r.min_bytes = 2.0 * 4096 * 4096 * 2;
  r.flops = 4.0 * 4096 * 4096;
  r.headline_mode = "cold";
  r.cold = timing(t);
  r.first_launch_s = 1e-3;
  r.bytes_per_s = r.min_bytes / t.median_s;
  r.flops_per_s = r.flops / t.median_s;
  r.arithmetic_intensity = r.flops / r.min_bytes;
  r.pct_of_memory_ceiling = 80;
  r.pct_of_compute_ceiling = 1;
  r.roofline = RooflineClass::memory_bound;
  r.correct = true;
  r.correctness_detail = "rel_l2 1e-4";
  return r;
}

inline RunContext context(const std::string& gpu = "NVIDIA H200") {
  RunContext c;
  c.suite = "kgate";
  c.gpu_name = gpu;
  c.gpu_uuid = "GPU-0000";
  c.compute_capability = 90;
  c.sm_count = 132;
  c.l2_bytes = 50 << 20;
  c.memory_bytes = 141ll << 30;
  c.driver_version = 13000;
  c.runtime_version = 13000;
  c.sm_clock_mhz_default = 1980;
  c.memory_clock_mhz = 3201;
  c.calibration = {.copy_bytes_per_s = 4.0e12,
                   .read_bytes_per_s = 4.4e12,
                   .gemm_flops_per_s = 700e12,
                   .launch_floor_s = 2e-6,
                   .graph_floor_s = 1e-6,
                   .datasheet_bytes_per_s = 4.8e12,
                   .datasheet_sm_clock_mhz = 1980,
                   .cached_from = ""};
  c.git_commit = "0123456789abcdef0123456789abcdef01234567";
  c.build_type = "Release";
  c.cuda_architectures = "90";
  c.host = "synthetic-host";
  c.date = "2026-11-21T12:00:00Z";
  c.command_line = "kgate_bench --kgate_out=run.json";
  return c;
}

inline RunResults run(std::vector<BenchmarkRecord> benchmarks, const std::string& gpu = "NVIDIA H200") {
  RunResults r;
  r.context = context(gpu);
  r.benchmarks = std::move(benchmarks);
  return r;
}

// A fresh directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = std::filesystem::temp_directory_path() /
            ("kgate-" + std::string(info->test_suite_name()) + "-" + info->name() + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name), std::ios::binary) << text;
    return file(name);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace kgate::synthetic
