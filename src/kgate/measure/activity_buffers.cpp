#include "activity_buffers.hpp"

#include <cupti_activity.h>

#include <cstdlib>
#include <iterator>

#include "cupti_check.hpp"
#include "kgate/measure/device.hpp"

namespace kgate {
namespace cupti {
namespace {

constexpr std::size_t kActivityBufferBytes = 4u << 20;
constexpr std::size_t kActivityBufferAlignment = 8;  // CUPTI's requirement

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kActivityBufferAlignment, kActivityBufferBytes));
  *size = *buffer != nullptr ? kActivityBufferBytes : 0;  // no buffer: CUPTI drops records and counts them
  *max_records = 0;                                       // as many as fit
}

KernelLaunch to_launch(const CUpti_ActivityKernel10& kernel) {
  KernelLaunch launch;
  KernelRecord& record = launch.record;
  record.name = kernel.name != nullptr ? kernel.name : "";
  record.grid[0] = kernel.gridX;
  record.grid[1] = kernel.gridY;
  record.grid[2] = kernel.gridZ;
  record.block[0] = kernel.blockX;
  record.block[1] = kernel.blockY;
  record.block[2] = kernel.blockZ;
  record.registers_per_thread = kernel.registersPerThread;
  record.static_shared_bytes = kernel.staticSharedMemory;
  record.dynamic_shared_bytes = kernel.dynamicSharedMemory;
  record.launches = 1;
  if (kernel.end > kernel.start) record.duration_s = static_cast<double>(kernel.end - kernel.start) * 1e-9;
  launch.correlation_id = kernel.correlationId;
  launch.start_ns = kernel.start;
  launch.end_ns = kernel.end;
  return launch;
}

ActivityRecords read_records(std::uint8_t* buffer, std::size_t valid_size) {
  ActivityRecords records;
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_size, &record);
    if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (status != CUPTI_SUCCESS) {
      records.error = describe(status, "cuptiActivityGetNextRecord");
      break;
    }
    // libcupti.so.13 writes its newest records, which are this toolkit's structs of these names.
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL:
        records.launches.push_back(to_launch(*reinterpret_cast<const CUpti_ActivityKernel10*>(record)));
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto& copy = *reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        records.transfers.push_back({copy.correlationId, {copy.start, copy.end}});
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto& set = *reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        records.transfers.push_back({set.correlationId, {set.start, set.end}});
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto& link = *reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        records.external_ids.push_back({link.correlationId, link.externalId});
        break;
      }
      default:  // the API records that external correlation needs enabled: nothing to keep
        break;
    }
  }
  const CUptiResult dropped_status = cuptiActivityGetNumDroppedRecords(nullptr, 0, &records.dropped);
  if (dropped_status != CUPTI_SUCCESS && records.error.empty())
    records.error = describe(dropped_status, "cuptiActivityGetNumDroppedRecords");
  return records;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid_size) {
  ActivityBuffers& buffers = ActivityBuffers::process();
  try {
    buffers.deliver(read_records(buffer, valid_size));
  } catch (...) {  // out of memory; an exception must not unwind into CUPTI
    buffers.fail("out of memory while reading CUPTI activity records");
  }
  std::free(buffer);
}

std::string check_activity() {
  const DeviceProbe& probe = probe_device();
  if (!probe.device) return probe.reason;
  CUptiResult result = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
  if (result != CUPTI_SUCCESS) return describe(result, "cuptiActivityRegisterCallbacks");
  // Enabling is where CUPTI refuses when another tool (Nsight Systems, Nsight Compute) is attached.
  result = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (result != CUPTI_SUCCESS) return describe(result, "cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)");
  result = cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (result != CUPTI_SUCCESS) return describe(result, "cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)");
  return {};
}

}  // namespace

ActivityBuffers& ActivityBuffers::process() {
  static ActivityBuffers* const instance = new ActivityBuffers(CuptiClients::process());
  return *instance;
}

const std::string& ActivityBuffers::unavailable_reason() {
  std::call_once(checked_, [this] { unavailable_reason_ = check_activity(); });
  return unavailable_reason_;
}

void ActivityBuffers::start_recording(const char* who) {
  if (const std::string& reason = unavailable_reason(); !reason.empty()) throw ProfilerError(reason);
  clients_.claim_activity(who);
  const std::lock_guard lock(mutex_);
  records_ = {};
}

CUptiResult ActivityBuffers::finish_recording() {
  const CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  clients_.release_activity();
  return flushed;
}

ActivityRecords ActivityBuffers::take() {
  const std::lock_guard lock(mutex_);
  return std::exchange(records_, {});
}

void ActivityBuffers::deliver(ActivityRecords records) {
  const std::lock_guard lock(mutex_);
  records_.launches.insert(records_.launches.end(), std::make_move_iterator(records.launches.begin()),
                           std::make_move_iterator(records.launches.end()));
  records_.transfers.insert(records_.transfers.end(), records.transfers.begin(), records.transfers.end());
  records_.external_ids.insert(records_.external_ids.end(), records.external_ids.begin(), records.external_ids.end());
  records_.dropped += records.dropped;
  if (records_.error.empty()) records_.error = std::move(records.error);
}

void ActivityBuffers::fail(std::string error) {
  const std::lock_guard lock(mutex_);
  records_.error = std::move(error);
}

}  // namespace cupti

std::string activity_unavailable_reason() { return cupti::ActivityBuffers::process().unavailable_reason(); }

}  // namespace kgate
