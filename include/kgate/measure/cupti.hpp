#pragma once
// What kgate learns from CUPTI, in three clients, each in its own header:
//  - KernelTrace (kernel_trace.hpp, Activity API): which kernels a variant really launched, with
//    their launch configuration and duration, so a report shows what ran and not only what was
//    asked for.
//  - CallActivity (call_activity.hpp, Activity API): the kernel, memcpy and memset records of each
//    timed call, which the timer turns into the call's time on the GPU's own clock (timing.hpp,
//    activity_span.hpp).
//  - RangeProfiler (range_profiler.hpp, Range Profiling API, auto range + user replay): hardware
//    counters per kernel; the profiled call is run once per pass the metrics need, each pass after
//    a setup its caller chooses (kgate_bench empties the L2 as before a cold sample), so the
//    counters describe the launch the cold mode times.
// Either API may be unavailable while the other works (cupti_support.hpp says why). No two clients
// may be active at the same time: trace and time first, then profile.
#include "kgate/measure/call_activity.hpp"
#include "kgate/measure/cupti_support.hpp"
#include "kgate/measure/kernel_trace.hpp"
#include "kgate/measure/range_profiler.hpp"
