// libkgate_peer_clock: kgate's CUPTI clock for the peers' Python (scripts/peers/peer_timing.py,
// through ctypes), so that a PyTorch call is timed by the same code, the same attribution and the
// same clock as a kgate variant: the span of the call's activity records (CallActivity), and the
// kernels it ran (KernelTrace). A plain C interface: every function returns 0 on success and -1 on
// failure, with kgate_peer_clock_error() saying why; nothing throws across it.
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "kgate/measure/cupti.hpp"
#include "kgate/results/results_io.hpp"

namespace {

std::optional<kgate::CallActivity> calls;
std::optional<kgate::KernelTrace> trace;
std::string last_error;

template <class Body>
int guarded(Body&& body) {
  try {
    body();
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
  } catch (...) {
    last_error = "unknown error";
  }
  return -1;
}

// Copies `text` into the caller's buffer (cut to fit, always terminated); the length it needs.
long copy_out(const std::string& text, char* buffer, unsigned long size) {
  if (buffer && size > 0) {
    const std::size_t n = std::min<std::size_t>(text.size(), size - 1);
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  return static_cast<long>(text.size());
}

}  // namespace

extern "C" {

const char* kgate_peer_clock_error() { return last_error.c_str(); }

// Why CUPTI activity cannot be recorded in this process (copied into `reason`), or 0 when it can.
long kgate_peer_clock_unavailable(char* reason, unsigned long size) { return copy_out(kgate::activity_unavailable_reason(), reason, size); }

int kgate_peer_calls_start(int serial_kernels) {
  return guarded([&] {
    calls.emplace(serial_kernels ? kgate::KernelActivity::serial : kgate::KernelActivity::concurrent);
    calls->start();
  });
}

int kgate_peer_call_begin(unsigned long long id) {
  return guarded([&] { calls.value().begin_call(id); });
}

int kgate_peer_call_end() {
  return guarded([&] { calls.value().end_call(); });
}

// Stops the recording; for calls 1..count, writes each one's span and busy time in seconds (a
// graph replay of `calls_per_sample` calls: the sum of its calls' own spans, as GpuTimer takes it).
// A call without records is an error.
int kgate_peer_calls_stop(unsigned long long count, int calls_per_sample, double* span_s, double* busy_s) {
  return guarded([&] {
    const std::vector<kgate::SampleTimes> times = kgate::sample_times(calls.value().stop(count), calls_per_sample);
    calls.reset();
    for (std::size_t c = 0; c < times.size(); ++c) {
      span_s[c] = times[c].span_s;
      busy_s[c] = times[c].busy_s;
    }
  });
}

int kgate_peer_trace_start() {
  return guarded([&] {
    trace.emplace();
    trace->start();
  });
}

// Stops the trace and writes the kernels it saw as a JSON array of kgate kernel records (the
// results file's "kernels"); returns the length the text needs (call again with a larger buffer
// when it did not fit: the records are kept until the next start), or -1.
long kgate_peer_trace_stop(char* json, unsigned long size) {
  static std::string text;
  if (trace) {
    const int status = guarded([&] {
      nlohmann::json kernels = nlohmann::json::array();
      for (const kgate::KernelRecord& k : trace->stop()) kernels.push_back(kgate::kernel_to_json(k));
      text = kernels.dump();
    });
    trace.reset();
    if (status != 0) return -1;
  }
  return copy_out(text, json, size);
}

}  // extern "C"
