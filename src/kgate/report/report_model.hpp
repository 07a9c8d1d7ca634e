#pragma once
// What the report says, computed once from its inputs (the new run, its comparison with the
// baseline, the runs before it). Sections, charts and sentences read this model; none of them
// measures or compares anything again.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kgate/gate/compare.hpp"
#include "kgate/report/format.hpp"
#include "kgate/report/report.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/results/roofline.hpp"

namespace kgate::report {

// The roof a benchmark is judged against: the one it comes closest to.
struct RoofShare {
  double pct = 0;         // 0 when the run has no ceilings (plain Google Benchmark JSON)
  std::string ceiling{};  // "copy" or "read" (measured bandwidths), "compute" (measured GEMM rate)
};

// The geometric mean of positive ratios (speedups), added one at a time; 0 when there are none.
class Geomean {
 public:
  void add(double ratio);
  std::size_t count() const { return count_; }
  double value() const;

 private:
  double log_sum_ = 0;
  std::size_t count_ = 0;
};

// One step of a family's journey (VariantInfo::follows): a variant against the one it follows.
struct JourneyStep {
  std::string from{}, to{};
  double speedup = 0;      // geomean over the shapes both ran of from's median / to's; 0 when none
  std::size_t shapes = 0;  // how many shapes that is
};

// A benchmark against another variant of its family at the same shape.
struct Versus {
  std::string variant{}, role{};
  double speedup = 0;  // the other's median / this one's: above 1 this one is faster; 0 unknown
  bool self = false;   // the benchmark is that variant
};

struct BenchmarkView {
  const BenchmarkRecord* record = nullptr;
  const BenchmarkComparison* comparison = nullptr;  // null without a baseline
  const BenchmarkRecord* baseline = nullptr;        // the same benchmark in the baseline run; null when absent
  double median_s = 0;                              // headline median; 0 when it did not run
  RoofShare roof;
  std::vector<Versus> versus{};  // one per comparator of its family, in the family's order
  double vs_best_peer = 0;       // the fastest peer's median / this one's at its shape; 0 unknown
  bool ran() const { return median_s > 0; }
};

// One shape of a family that has peers (other libraries measured beside kgate, docs/peers.md): the
// fastest peer against kgate's fastest own variant (its reference or a candidate: a vendor library
// is not kgate's), each among those that ran and were not found wrong.
struct PeerMatch {
  std::string shape{};
  const BenchmarkView* peer = nullptr;   // null when no peer ran at this shape
  const BenchmarkView* kgate = nullptr;  // null when no kgate variant ran
  double speedup = 0;                    // peer median / kgate median: above 1 kgate is faster; 0 unknown
  // Neither is faster: within kPeerTieFraction of each other, or the 99% interval of the ratio of
  // their medians holds 1. A tie is counted neither as kgate slower nor as kgate faster.
  bool tie = false;
};
inline constexpr double kPeerTieFraction = 0.01;

struct FamilyView {
  std::string name{};
  std::vector<std::string> variants{}, shapes{};      // variants by role, reference first, then journey step; shapes as run
  std::map<std::string, std::string> follows{};       // variant -> the variant it is the next step after
  std::vector<JourneyStep> journey{};                 // its steps in the variants' order
  std::vector<std::string> comparators{};             // reference variants, then vendor ones
  std::map<std::string, std::string> roles{};         // variant -> role
  std::vector<const BenchmarkView*> rows{};           // shape by shape, each shape's variants in order
  std::vector<const BenchmarkComparison*> missing{};  // in the baseline, not in this run
  std::vector<std::string> peers{};                   // the variants of role "peer"
  std::vector<std::string> wrong_peers{};             // peers whose output failed its check: compared with nothing
  std::vector<PeerMatch> peer_matches{};              // one per shape at which a peer was measured
  const BenchmarkView* find(const std::string& variant, const std::string& shape) const;
};

// One output tensor's figures from a correctness detail in kgate's accuracy format
// ("x: rel_l2=0.00161 (limit 0.01) max_abs=0.0141 ... violations=0/4096 ... PASS").
struct TensorCheck {
  std::string tensor{};
  double rel_l2 = 0, limit = 0, max_abs = 0;
  std::string violations{};  // "0/4096"
};
// Empty when the detail is not in that format (a skip reason, another tool's text).
std::vector<TensorCheck> parse_correctness_detail(const std::string& detail);

struct HistoryRow {
  const NamedRun* run = nullptr;
  const NamedRun* against = nullptr;  // the baseline, else the run before; null for the first
  std::optional<ComparisonReport> comparison;
};

// A variant's geometric-mean speedup over its shapes, run by run, against the first run of the
// history (time there / time in that run): the trend chart's line.
struct TrendSeries {
  std::string variant{};
  std::vector<double> speedup{};  // one per history row; 0 where no shape is in both runs
};
struct Trend {
  std::string family{};
  std::vector<TrendSeries> series{};
};

struct ReportModel {
  ReportModel() = default;
  ReportModel(const ReportModel&) = delete;  // views point into the model's own comparison
  ReportModel& operator=(const ReportModel&) = delete;
  ReportModel(ReportModel&&) = default;
  ReportModel& operator=(ReportModel&&) = default;

  const ReportInputs* inputs = nullptr;  // outlives the model
  std::optional<ComparisonReport> comparison;
  std::vector<BenchmarkView> views{};  // one per benchmark of the new run, in its order
  std::vector<FamilyView> families{};  // in order of first appearance
  std::vector<HistoryRow> history{};   // earlier runs by date, then the new run; empty without them
  std::vector<Trend> trends{};

  const RunContext& context() const { return inputs->current.run.context; }
  bool has_ceilings() const;
  std::size_t sm_count() const { return static_cast<std::size_t>(std::max(context().sm_count, 0)); }
};

// Throws EnvironmentMismatch as compare_runs does.
ReportModel build_model(const ReportInputs& inputs);

// The rate a benchmark achieves against its roof: GB/s against a bandwidth, FLOP/s against the
// GEMM rate; "-" without a roof.
std::string achieved_rate(const BenchmarkView& view);

// The kernel with the most GPU time per call: the one that decides a variant's launch shape.
const KernelRecord* dominant_kernel(const BenchmarkRecord& record);

// The sentences of the report, each from the model's figures (report_summary.cpp,
// report_observations.cpp; the rules are in docs/report.md).
std::vector<std::string> executive_summary(const ReportModel& model);
// Per family with peers, kgate's fastest variant against the fastest peer over the shapes where
// both ran: one row each, the shapes where kgate is slower named. No rows without peers.
Table peer_summary_table(const ReportModel& model);
std::string gate_line(const ReportModel& model);
std::vector<std::string> observations(const ReportModel& model);

// The charts, as standalone SVG (report_charts.cpp).
std::vector<Chart> draw_charts(const ReportModel& model);

}  // namespace kgate::report
