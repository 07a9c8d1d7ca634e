// The CUPTI module on a real GPU: kernel records from the Activity API, each timed call's records
// and the timer built on them, counters from the range profiler, and the three used one after the
// other as a benchmark run uses them. Skips with the
// reason where there is no GPU, or where CUPTI is not usable (no profiling permission, under Nsight).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kgate/core/ctest_gpu.hpp"
#include "kgate/core/cuda_check.hpp"
#include "kgate/measure/cupti.hpp"
#include "kgate/measure/device.hpp"
#include "kgate/core/device_buffer.hpp"
#include "kgate/measure/timing.hpp"

namespace kgate_cupti_test {

__global__ void copy_kernel(const float* in, float* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

// A template in a namespace, so the demangled name differs visibly from the mangled one.
template <int Factor>
__global__ void scale_kernel(float* data, std::size_t n) {
  extern __shared__ float staging[];
  const std::size_t i = (blockIdx.y * static_cast<std::size_t>(gridDim.x) + blockIdx.x) * blockDim.x + threadIdx.x;
  staging[threadIdx.x] = i < n ? data[i] : 0.0f;
  __syncthreads();
  if (i < n) data[i] = staging[threadIdx.x] * Factor;
}

constexpr int kCopyGrid = 1024, kCopyBlock = 256;
constexpr dim3 kScaleGrid{64, 2, 1};
constexpr int kScaleBlock = 128;
constexpr std::size_t kScaleShared = kScaleBlock * sizeof(float);

void launch_copy(const float* in, float* out, std::size_t n) {
  copy_kernel<<<kCopyGrid, kCopyBlock>>>(in, out, n);
  KGATE_CHECK_LAUNCH();
}

void launch_scale(float* data, std::size_t n) {
  scale_kernel<3><<<kScaleGrid, kScaleBlock, kScaleShared>>>(data, n);
  KGATE_CHECK_LAUNCH();
}

// Why a test cannot run here (no GPU, no permission, under Nsight), or empty when it can.
std::string activity_missing() {
  const std::string reason = kgate::activity_unavailable_reason();
  return reason.empty() ? reason : "CUPTI activity tracing unavailable: " + reason;
}

std::string counters_missing() {
  const std::string reason = kgate::counters_unavailable_reason();
  return reason.empty() ? reason : "CUPTI range profiler unavailable: " + reason;
}

// Device floats, freed with the test.
class Floats {
 public:
  explicit Floats(std::size_t count) : allocation_(count * sizeof(float)) {}
  float* get() const { return static_cast<float*>(allocation_.get()); }

 private:
  kgate::DeviceAllocation allocation_;
};

const kgate::KernelMetrics& only_kernel(const kgate::RangeProfile& profile) {
  EXPECT_EQ(profile.kernels.size(), 1u);
  return profile.kernels.at(0);
}

// Four times L2 or more, so that a replayed pass cannot find its input still cached.
constexpr std::size_t kLargeFloats = std::size_t{64} << 20;  // 256 MiB per buffer

void expect_reads_input_once(const kgate::KernelMetrics& kernel, std::size_t floats) {
  const double expected = static_cast<double>(floats * sizeof(float));
  EXPECT_NEAR(kernel.values.at("dram__bytes_read.sum"), expected, 0.10 * expected);
  EXPECT_GT(kernel.values.at("gpu__time_duration.sum"), 0);
}

TEST(KernelTrace, RecordsFoldedLaunchesInOrder) {
  if (const std::string why = activity_missing(); !why.empty()) GTEST_SKIP() << why;
  constexpr std::size_t n = std::size_t{1} << 20;
  const Floats a(n), b(n);
  launch_copy(a.get(), b.get(), n);  // before start(): must not be recorded
  KGATE_CUDA_CHECK(cudaDeviceSynchronize());

  kgate::KernelTrace trace;
  trace.start();
  for (int i = 0; i < 3; ++i) launch_copy(a.get(), b.get(), n);
  launch_scale(b.get(), n);
  const std::vector<kgate::KernelRecord> records = trace.stop();

  ASSERT_EQ(records.size(), 2u);
  const kgate::KernelRecord& copy = records[0];
  EXPECT_EQ(copy.launches, 3);
  EXPECT_EQ(copy.name.rfind("_Z", 0), 0u) << copy.name;
  EXPECT_NE(copy.demangled.find("kgate_cupti_test::copy_kernel("), std::string::npos) << copy.demangled;
  EXPECT_EQ(copy.grid[0], kCopyGrid);
  EXPECT_EQ(copy.grid[1], 1);
  EXPECT_EQ(copy.block[0], kCopyBlock);
  EXPECT_EQ(copy.block[2], 1);
  EXPECT_GT(copy.registers_per_thread, 0);
  EXPECT_LE(copy.registers_per_thread, 255);
  EXPECT_EQ(copy.static_shared_bytes, 0);
  EXPECT_EQ(copy.dynamic_shared_bytes, 0);
  EXPECT_GT(copy.duration_s, 0);
  EXPECT_LT(copy.duration_s, 0.1);

  const kgate::KernelRecord& scale = records[1];
  EXPECT_EQ(scale.launches, 1);
  EXPECT_NE(scale.demangled.find("kgate_cupti_test::scale_kernel<3>("), std::string::npos) << scale.demangled;
  EXPECT_EQ(scale.grid[0], static_cast<int>(kScaleGrid.x));
  EXPECT_EQ(scale.grid[1], static_cast<int>(kScaleGrid.y));
  EXPECT_EQ(scale.block[0], kScaleBlock);
  EXPECT_EQ(scale.dynamic_shared_bytes, static_cast<long long>(kScaleShared));
  EXPECT_GT(scale.duration_s, 0);
}

TEST(KernelTrace, SecondTraceStartsEmpty) {
  if (const std::string why = activity_missing(); !why.empty()) GTEST_SKIP() << why;
  constexpr std::size_t n = std::size_t{1} << 16;
  const Floats a(n), b(n);
  kgate::KernelTrace first;
  first.start();
  launch_copy(a.get(), b.get(), n);
  ASSERT_EQ(first.stop().size(), 1u);

  kgate::KernelTrace second;
  second.start();
  EXPECT_THROW(kgate::KernelTrace().start(), kgate::ProfilerError);  // one trace at a time
  launch_scale(a.get(), n);
  const std::vector<kgate::KernelRecord> records = second.stop();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_NE(records[0].demangled.find("scale_kernel"), std::string::npos);
}

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Runs for `ns` of the GPU's clock: a kernel whose own duration is known.
__global__ void spin_kernel(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
}

TEST(CallActivity, AttributesRecordsToTheCallThatCausedThem) {
  if (const std::string why = activity_missing(); !why.empty()) GTEST_SKIP() << why;
  constexpr std::size_t n = std::size_t{1} << 20;
  const Floats a(n), b(n);
  cudaStream_t stream = nullptr;
  KGATE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  // Call 3 is a graph of two kernel nodes: its records carry the graph launch's correlation.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  KGATE_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  copy_kernel<<<kCopyGrid, kCopyBlock, 0, stream>>>(a.get(), b.get(), n);
  copy_kernel<<<kCopyGrid, kCopyBlock, 0, stream>>>(b.get(), a.get(), n);
  KGATE_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  KGATE_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));

  kgate::CallActivity activity;
  activity.start();
  EXPECT_THROW(kgate::KernelTrace().start(), kgate::ProfilerError);        // one recording at a time
  copy_kernel<<<kCopyGrid, kCopyBlock, 0, stream>>>(a.get(), b.get(), n);  // in no call
  activity.begin_call(1);
  copy_kernel<<<kCopyGrid, kCopyBlock, 0, stream>>>(a.get(), b.get(), n);
  activity.end_call();
  activity.begin_call(2);
  KGATE_CUDA_CHECK(cudaMemsetAsync(b.get(), 0, n * sizeof(float), stream));
  KGATE_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  spin_kernel<<<1, 1, 0, stream>>>(20'000);
  activity.end_call();
  activity.begin_call(3);
  KGATE_CUDA_CHECK(cudaGraphLaunch(exec, stream));
  activity.end_call();
  const std::vector<std::vector<kgate::ActivityInterval>> calls = activity.stop(3);
  KGATE_CUDA_CHECK(cudaGraphExecDestroy(exec));
  KGATE_CUDA_CHECK(cudaGraphDestroy(graph));
  KGATE_CUDA_CHECK(cudaStreamDestroy(stream));

  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].size(), 1u);
  EXPECT_EQ(calls[1].size(), 3u);  // the memset, the copy and the spin
  EXPECT_EQ(calls[2].size(), 2u);  // both graph nodes
  EXPECT_GE(kgate::span_s(calls[1]), 20e-6);
  EXPECT_LT(kgate::span_s(calls[1]), 1e-3);
  EXPECT_LE(kgate::busy_s(calls[1]), kgate::span_s(calls[1]));
  EXPECT_GT(kgate::busy_s(calls[1]), 19e-6);
  kgate::KernelTrace after;  // the recording is over: a trace may start
  after.start();
  EXPECT_TRUE(after.stop().empty());
}

// The timer's CUPTI samples against a kernel whose length the GPU clock sets: the span holds the
// kernel and not the launch, the event pair holds both.
TEST(CuptiTimer, SamplesAreTheKernelsOwnSpan) {
  if (const std::string why = activity_missing(); !why.empty()) GTEST_SKIP() << why;
  const kgate::DeviceInfo& device = *kgate::probe_device().device;
  kgate::TimingOptions options;
  // A 5 us kernel meets the noise target long before the suite's 0.5 s of GPU time (100k
  // samples, which took the whole 1 s cap for each of the three measurements here): 0.01 s of it
  // are 2k samples, plenty for medians that must fall in a 1.5 us window, and a 0.25 s cap still
  // thousands. (0.05 s and a 1 s cap made this the longest CUPTI case, 1.05 s on an H200, on the
  // chain that runs in one process.)
  options.stopping.min_gpu_time_s = 0.01;
  options.stopping.max_wall_time_s = 0.25;
  kgate::GpuTimer timer(device, options);
  ASSERT_EQ(timer.timer(), kgate::Timer::cupti) << timer.timer_fallback_reason();
  constexpr unsigned long long kSpinNs = 5'000;
  const kgate::CopyLaunch spin = [](int, cudaStream_t s) {
    spin_kernel<<<1, 1, 0, s>>>(kSpinNs);
    KGATE_CHECK_LAUNCH();
  };
  // The spin ends on the first %globaltimer reading past 5 us; that timer updates about every
  // microsecond in a kernel (an H100 read 5.86 us), so the kernel lasts 5 to 6 us.
  const kgate::TimingRecord cold = timer.measure_cold(spin, 2);
  EXPECT_EQ(cold.timer, "cupti");
  EXPECT_GE(cold.summary.median, 5.0e-6);
  EXPECT_LT(cold.summary.median, 6.5e-6);
  EXPECT_GT(cold.event_median_s, cold.summary.median);  // the launch processing is in the events only
  EXPECT_NEAR(cold.busy_median_s, cold.summary.median, 0.05e-6);
  const kgate::TimingRecord hot = timer.measure_hot(spin, cold.summary.median);
  EXPECT_EQ(hot.timer, "cupti");
  EXPECT_GT(hot.launches_per_sample, 1);
  EXPECT_GE(hot.summary.median, 5.0e-6);
  EXPECT_LT(hot.summary.median, 6.5e-6);
  EXPECT_GT(hot.event_median_s, hot.summary.median);  // a replay's gaps between nodes are in the events only

  options.timer = kgate::Timer::events;
  kgate::GpuTimer events(device, options);
  const kgate::TimingRecord by_events = events.measure_cold(spin, 2);
  EXPECT_EQ(by_events.timer, "events");
  EXPECT_EQ(by_events.event_median_s, 0);
  EXPECT_GT(by_events.summary.median, cold.summary.median);
}

TEST(RangeProfiler, UnknownMetricsAreNamed) {
  if (const std::string why = counters_missing(); !why.empty()) GTEST_SKIP() << why;
  try {
    kgate::RangeProfiler profiler({"dram__bytes_read.sum", "no_such__metric.sum", "dram__bytes_read.no_such_rollup"});
    FAIL() << "expected kgate::ProfilerError";
  } catch (const kgate::ProfilerError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("no_such__metric.sum"), std::string::npos) << message;
    EXPECT_NE(message.find("dram__bytes_read.no_such_rollup"), std::string::npos) << message;
  }
}

TEST(RangeProfiler, CopyKernelReadsItsInputOnceAndProfilesAgain) {
  if (const std::string why = counters_missing(); !why.empty()) GTEST_SKIP() << why;
  const Floats in(kLargeFloats), out(kLargeFloats);
  KGATE_CUDA_CHECK(cudaMemset(in.get(), 0, kLargeFloats * sizeof(float)));

  kgate::RangeProfiler profiler;
  // The default set fits two replay passes on Hopper (sm__throughput alone would take eight; see
  // default_range_metrics); other chips are only asked for at least one.
  if (kgate::probe_device().device->compute_capability / 10 == 9) EXPECT_LE(profiler.passes(), 2u);
  EXPECT_GE(profiler.passes(), 1u);
  const kgate::RangeProfile first = profiler.profile([&] { launch_copy(in.get(), out.get(), kLargeFloats); });
  const kgate::KernelMetrics& copy = only_kernel(first);
  expect_reads_input_once(copy, kLargeFloats);
  for (const std::string& metric : kgate::default_range_metrics()) {
    ASSERT_TRUE(copy.values.contains(metric)) << metric;
    EXPECT_TRUE(std::isfinite(copy.values.at(metric))) << metric;
    EXPECT_DOUBLE_EQ(first.combined.at(metric), copy.values.at(metric)) << metric;
  }

  // The same object again, now with two kernels: counts add up, percentages stay percentages.
  const kgate::RangeProfile second = profiler.profile([&] {
    launch_copy(in.get(), out.get(), kLargeFloats);
    launch_scale(out.get(), kLargeFloats);
  });
  ASSERT_EQ(second.kernels.size(), 2u);
  expect_reads_input_once(second.kernels[0], kLargeFloats);
  EXPECT_NE(second.kernels[0].range_name, second.kernels[1].range_name);
  for (const char* metric : {"dram__bytes_read.sum", "gpu__time_duration.sum"})
    EXPECT_DOUBLE_EQ(second.combined.at(metric), second.kernels[0].values.at(metric) + second.kernels[1].values.at(metric)) << metric;
  const double pct = second.combined.at("dram__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_GE(pct, 0);
  EXPECT_LE(pct, 100.5);
}

TEST(RangeProfiler, DurationIsCollectedButNotReportedUnlessAsked) {
  if (const std::string why = counters_missing(); !why.empty()) GTEST_SKIP() << why;
  constexpr std::size_t n = std::size_t{1} << 20;
  const Floats a(n), b(n);
  kgate::RangeProfiler profiler({"dram__bytes_read.sum", "sm__inst_issued.avg.pct_of_peak_sustained_elapsed"});
  const kgate::RangeProfile profile = profiler.profile([&] { launch_copy(a.get(), b.get(), n); });
  const kgate::KernelMetrics& copy = only_kernel(profile);
  EXPECT_EQ(copy.values.size(), 2u);
  EXPECT_EQ(profile.combined.size(), 2u);
  EXPECT_FALSE(profile.combined.contains("gpu__time_duration.sum"));
}

// User replay: the call runs once unprofiled, then once per pass, each after the pass setup.
TEST(RangeProfiler, SetupRunsBeforeEveryPass) {
  if (const std::string why = counters_missing(); !why.empty()) GTEST_SKIP() << why;
  constexpr std::size_t n = std::size_t{1} << 20;
  const Floats a(n), b(n);
  std::size_t setups = 0, calls = 0;
  kgate::RangeProfiler profiler(kgate::default_range_metrics(), [&] { ++setups; });
  const kgate::RangeProfile profile = profiler.profile([&] {
    ++calls;
    launch_copy(a.get(), b.get(), n);
  });
  EXPECT_EQ(only_kernel(profile).range_name, "0");
  EXPECT_EQ(setups, profiler.passes());
  EXPECT_EQ(calls, profiler.passes() + 1);
}

std::size_t l2_bytes() {
  int device = 0, bytes = 0;
  KGATE_CUDA_CHECK(cudaGetDevice(&device));
  KGATE_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device));
  return static_cast<std::size_t>(bytes);
}

// A pass whose setup empties the L2, as kgate_bench's counter pass does, reads a copy's input from
// DRAM once, even for an input that fits in the L2 many times over. (Without a setup, a pass on an
// H200 also read all of it from DRAM: CUPTI's pass boundary itself leaves the L2 without the
// input, so what the setup decides is the state the L2 is left in, clean or dirty, as the timed
// cold mode leaves it.)
TEST(RangeProfiler, FlushedPassesReadTheirInputFromDram) {
  if (const std::string why = counters_missing(); !why.empty()) GTEST_SKIP() << why;
  const std::size_t floats = l2_bytes() / 4 / sizeof(float);  // input and output: half the L2
  const Floats in(floats), out(floats);
  KGATE_CUDA_CHECK(cudaMemset(in.get(), 0, floats * sizeof(float)));
  const kgate::DeviceAllocation flush(2 * l2_bytes());
  const auto copy = [&] { launch_copy(in.get(), out.get(), floats); };
  const std::vector<std::string> metrics{"dram__bytes_read.sum", "gpu__time_duration.sum"};
  const kgate::RangeProfile emptied =
      kgate::RangeProfiler(metrics, [&] { KGATE_CUDA_CHECK(cudaMemset(flush.get(), 1, flush.bytes())); }).profile(copy);
  expect_reads_input_once(only_kernel(emptied), floats);
}

std::string failure_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "no exception";
}

// A call that fails part way through a replay leaves the profiler usable for the next benchmark.
TEST(RangeProfiler, UsableAfterAFailedPass) {
  if (const std::string why = counters_missing(); !why.empty()) GTEST_SKIP() << why;
  const Floats in(kLargeFloats), out(kLargeFloats);
  KGATE_CUDA_CHECK(cudaMemset(in.get(), 0, kLargeFloats * sizeof(float)));
  std::size_t setups = 0;
  std::size_t failing_setup = 0;  // the setup that throws; 0: none
  kgate::RangeProfiler profiler(kgate::default_range_metrics(), [&] {
    if (++setups == failing_setup) throw std::runtime_error("synthetic-setup-failure");
  });
  const auto copy = [&] { launch_copy(in.get(), out.get(), kLargeFloats); };
  failing_setup = profiler.passes() > 1 ? 2 : 1;  // mid-replay when there is more than one pass
  EXPECT_EQ(failure_of([&] { profiler.profile(copy); }), "synthetic-setup-failure");
  EXPECT_EQ(setups, failing_setup);
  EXPECT_EQ(failure_of([&] { profiler.profile([] { throw std::runtime_error("synthetic-launch-failure"); }); }),
            "synthetic-launch-failure");

  failing_setup = 0;
  expect_reads_input_once(only_kernel(profiler.profile(copy)), kLargeFloats);
}

// Several calls in one session, each after the setup inside the pass: every call gets the counters
// of its own kernels, named as if profiled alone, and the setup's kernel is dropped.
TEST(RangeProfiler, BatchedCallsGetTheirOwnCounters) {
  if (const std::string why = counters_missing(); !why.empty()) GTEST_SKIP() << why;
  constexpr std::size_t half = kLargeFloats / 2;
  const Floats in(kLargeFloats), out(kLargeFloats), flush_in(kLargeFloats), flush_out(kLargeFloats);
  KGATE_CUDA_CHECK(cudaMemset(in.get(), 0, kLargeFloats * sizeof(float)));
  KGATE_CUDA_CHECK(cudaMemset(flush_in.get(), 0, kLargeFloats * sizeof(float)));
  std::size_t setups = 0;
  kgate::RangeProfiler profiler(kgate::default_range_metrics(), [&] {
    ++setups;
    launch_copy(flush_in.get(), flush_out.get(), kLargeFloats);
  });
  const std::vector<kgate::RangeProfile> profiles = profiler.profile_batch({{[&] { launch_copy(in.get(), out.get(), kLargeFloats); }, 1},
                                                                            {[&] {
                                                                               launch_copy(in.get(), out.get(), half);
                                                                               launch_scale(out.get(), half);
                                                                             },
                                                                             2}},
                                                                           1);
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(setups, 2 * profiler.passes());
  expect_reads_input_once(only_kernel(profiles[0]), kLargeFloats);
  ASSERT_EQ(profiles[1].kernels.size(), 2u);
  expect_reads_input_once(profiles[1].kernels[0], half);
  EXPECT_EQ(profiles[1].kernels[0].range_name, "0");
  EXPECT_EQ(profiles[1].kernels[1].range_name, "1");

  // A call that launches other kernels than it declares is refused, and the profiler goes on.
  EXPECT_THROW(profiler.profile_batch({{[&] { launch_copy(in.get(), out.get(), half); }, 2},
                                       {[&] { launch_copy(in.get(), out.get(), half); }, 1}},
                                      1),
               kgate::ProfilerError);
  expect_reads_input_once(only_kernel(profiler.profile([&] { launch_copy(in.get(), out.get(), kLargeFloats); })), kLargeFloats);
}

// Expects `action` to throw ProfilerError whose message holds `words`.
void expect_refused(const std::function<void()>& action, const std::string& words) {
  try {
    action();
    ADD_FAILURE() << "expected kgate::ProfilerError with '" << words << "'";
  } catch (const kgate::ProfilerError& error) {
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
  }
}

// A recording and an enabled range profiler exclude each other, whichever came first, and the
// refused client leaves the other's claim as it was.
TEST(Cupti, RecordingAndProfilingExcludeEachOther) {
  if (const std::string why = activity_missing(); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = counters_missing(); !why.empty()) GTEST_SKIP() << why;
  const Floats in(kLargeFloats), out(kLargeFloats);
  const auto copy = [&] { launch_copy(in.get(), out.get(), kLargeFloats); };
  {
    kgate::RangeProfiler profiler;
    kgate::KernelTrace trace;
    trace.start();
    expect_refused([&] { profiler.profile(copy); }, "RangeProfiler::profile() while a KernelTrace is recording");
    copy();
    EXPECT_EQ(trace.stop().size(), 1u);

    expect_reads_input_once(only_kernel(profiler.profile(copy)), kLargeFloats);  // enabled from here on
    expect_refused([] { kgate::KernelTrace().start(); }, "KernelTrace::start() while a RangeProfiler is enabled");
    expect_refused([] { kgate::CallActivity().start(); }, "CallActivity::start() while a RangeProfiler is enabled");
    expect_reads_input_once(only_kernel(profiler.profile(copy)), kLargeFloats);
  }
  kgate::KernelTrace trace;  // the profiler is gone, and with it its claim
  trace.start();
  copy();
  EXPECT_EQ(trace.stop().size(), 1u);
}

// The order a benchmark run uses: trace the timing pass, profile, then trace the next benchmark,
// with a fresh profiler object for the second benchmark.
TEST(Cupti, TraceProfileTraceAlternate) {
  if (const std::string why = activity_missing(); !why.empty()) GTEST_SKIP() << why;
  if (const std::string why = counters_missing(); !why.empty()) GTEST_SKIP() << why;
  const Floats in(kLargeFloats), out(kLargeFloats);
  const auto copy = [&] { launch_copy(in.get(), out.get(), kLargeFloats); };
  for (int benchmark = 0; benchmark < 2; ++benchmark) {
    kgate::KernelTrace trace;
    trace.start();
    copy();
    const std::vector<kgate::KernelRecord> records = trace.stop();
    ASSERT_EQ(records.size(), 1u) << "benchmark " << benchmark;
    EXPECT_GT(records[0].duration_s, 0);

    kgate::RangeProfiler profiler;
    expect_reads_input_once(only_kernel(profiler.profile(copy)), kLargeFloats);
  }
}

}  // namespace kgate_cupti_test

int main(int argc, char** argv) {
  try {  // before anything touches CUDA: the GPU ctest gave this test (RESOURCE_GROUPS gpus:1)
    if (const std::string gpu = kgate::use_ctest_gpu(); !gpu.empty()) std::fprintf(stderr, "kgate: %s\n", gpu.c_str());
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "kgate_cupti_test: %s\n", e.what());
    return 1;
  }
  ::testing::InitGoogleTest(&argc, argv);
  // Listing (gtest_discover_tests, at build time) needs no GPU, even where KGATE_REQUIRE_GPU=1.
  if (!GTEST_FLAG_GET(list_tests)) {
    if (const std::string unmet = kgate::unmet_gpu_requirement(kgate::probe_device().reason); !unmet.empty()) {
      std::fprintf(stderr, "kgate_cupti_test: %s\n", unmet.c_str());
      return 1;
    }
  }
  return RUN_ALL_TESTS();
}
