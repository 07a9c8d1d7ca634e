#pragma once
// The Activity API's buffers, which KernelTrace and CallActivity share: CUPTI fills buffers this
// object hands it and gives them back full, and the records in them (kernels, memcpys, memsets,
// external correlations) wait here until the client that records takes them.
//
// One per process, ActivityBuffers::process(): CUPTI's buffer callbacks are plain functions,
// registered once per process and handed no pointer of ours, so they reach it through that.
// Lifetime: made at first use and never destroyed, since CUPTI may hand back its last buffers
// while the process exits, after static destructors have run. Thread-safety: CUPTI calls back on
// a thread of its own, so the records are read and written under a mutex; which client records
// (one at a time) is the CuptiClients' to say, which this object is given.
#include <cupti_result.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cupti_clients.hpp"
#include "kgate/base/activity_span.hpp"
#include "kgate/measure/kernel_trace.hpp"

namespace kgate::cupti {

// What CUPTI delivered since a recording started.
struct ActivityRecords {
  std::vector<KernelLaunch> launches;                                 // kernel records
  std::vector<std::pair<std::uint32_t, ActivityInterval>> transfers;  // memcpy and memset records, by correlation id
  std::vector<std::pair<std::uint32_t, std::uint64_t>> external_ids;  // correlation id -> external (call) id
  std::size_t dropped = 0;                                            // records CUPTI had no buffer room for
  std::string error;  // the first failure while reading them, kept for the client: a callback cannot throw
};

class ActivityBuffers {
 public:
  static ActivityBuffers& process();

  ActivityBuffers(const ActivityBuffers&) = delete;
  ActivityBuffers& operator=(const ActivityBuffers&) = delete;

  // Registers CUPTI's buffer callbacks and tries enabling kernel records, once: why the Activity
  // API cannot be used in this process, or empty.
  const std::string& unavailable_reason();

  // A recording's start: throws ProfilerError with the reason above, or naming `who` when another
  // client holds CUPTI (CuptiClients::claim_activity); then empties the records. The caller
  // enables its kinds next.
  void start_recording(const char* who);
  // A recording whose kinds could not be enabled: lets another client record.
  void cancel_recording() { clients_.release_activity(); }
  // A recording's end, after the caller disabled its kinds: hands every buffered record to the
  // callback and lets another client record. Returns the flush's result.
  CUptiResult finish_recording();

  // Takes what CUPTI delivered, leaving none.
  ActivityRecords take();

  // From the buffer-completed callback: a buffer's records, or why they could not be read.
  void deliver(ActivityRecords records);
  void fail(std::string error);

 private:
  explicit ActivityBuffers(CuptiClients& clients) : clients_(clients) {}

  CuptiClients& clients_;
  std::once_flag checked_;
  std::string unavailable_reason_;
  std::mutex mutex_;  // guards records_
  ActivityRecords records_;
};

}  // namespace kgate::cupti
