#include "cupti_clients.hpp"

#include <string>

#include "kgate/measure/cupti_support.hpp"

namespace kgate::cupti {

CuptiClients& CuptiClients::process() {
  static CuptiClients* const instance = new CuptiClients;
  return *instance;
}

void CuptiClients::claim_activity(const char* who) {
  if (range_profiler_enabled_) throw ProfilerError(std::string(who) + " while a RangeProfiler is enabled");
  if (activity_recording_.exchange(true)) throw ProfilerError(std::string(who) + " while another CUPTI activity recording is running");
}

}  // namespace kgate::cupti
