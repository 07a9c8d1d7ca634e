#pragma once
// Which of kgate's CUPTI clients hold this process. CUPTI's state is the process's, not an
// object's: the Activity API allows one recording at a time (a KernelTrace or a CallActivity; they
// enable the same kinds and share ActivityBuffers), and a recording must not run while a
// RangeProfiler holds the range profiler enabled on the context, nor a profile() while one
// records: either would count the other's work (a recording would take each replay pass for a
// launch of its own). The three clients know nothing of each other; they meet here.
//
// One per process, CuptiClients::process(). Lifetime: made at first use and never destroyed, so a
// client that a static destructor ends at exit still finds it. Thread-safety: both flags are
// atomics, and a claim is one exchange, so two threads cannot both start a recording.
#include <atomic>

namespace kgate::cupti {

class CuptiClients {
 public:
  static CuptiClients& process();

  CuptiClients(const CuptiClients&) = delete;
  CuptiClients& operator=(const CuptiClients&) = delete;

  // Marks an activity recording as running; throws ProfilerError naming `who` (the caller, as in
  // "KernelTrace::start()") while a RangeProfiler is enabled or another recording runs.
  void claim_activity(const char* who);
  void release_activity() { activity_recording_ = false; }
  bool activity_recording() const { return activity_recording_; }

  // Set from a RangeProfiler's first profile() until it disables the range profiler again.
  void set_range_profiler_enabled(bool enabled) { range_profiler_enabled_ = enabled; }

 private:
  CuptiClients() = default;

  std::atomic<bool> activity_recording_{false};
  std::atomic<bool> range_profiler_enabled_{false};
};

}  // namespace kgate::cupti
