#include "kgate/suite/options.hpp"

namespace kgate {

TimingOptions suite_timing_defaults() {
  TimingOptions timing;
  timing.stopping.min_gpu_time_s = 0.05;
  timing.stopping.max_wall_time_s = 5.0;
  timing.stopping.max_samples = 1000;
  return timing;
}

}  // namespace kgate
