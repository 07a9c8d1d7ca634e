// The device probe for Python: kgate.device() (python/kgate/device.py) raises with the probe's
// reason where there is no usable GPU.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "kgate/base/text.hpp"
#include "kgate/measure/device.hpp"

namespace nb = nanobind;

namespace kgate::python {

void bind_device(nb::module_& module) {
  nb::class_<DeviceInfo>(module, "Device", "The CUDA device the process runs on, as a run records it")
      .def_ro("ordinal", &DeviceInfo::ordinal)
      .def_ro("name", &DeviceInfo::name)
      .def_ro("uuid", &DeviceInfo::uuid)
      .def_ro("compute_capability", &DeviceInfo::compute_capability, "major * 10 + minor, e.g. 90")
      .def_ro("sm_count", &DeviceInfo::sm_count)
      .def_ro("l2_bytes", &DeviceInfo::l2_bytes)
      .def_ro("global_memory_bytes", &DeviceInfo::global_memory_bytes)
      .def_ro("memory_bus_bits", &DeviceInfo::memory_bus_bits)
      .def_ro("memory_clock_khz", &DeviceInfo::memory_clock_khz, "0 where the runtime no longer reports it")
      .def_ro("sm_clock_khz", &DeviceInfo::sm_clock_khz)
      .def_ro("driver_version", &DeviceInfo::driver_version, "e.g. 13000")
      .def_ro("runtime_version", &DeviceInfo::runtime_version)
      .def("__repr__", [](const DeviceInfo& device) {
        return printf_string("Device(%d: %s, compute capability %d.%d, %.1f GiB)", device.ordinal, device.name.c_str(),
                             device.compute_capability / 10, device.compute_capability % 10,
                             static_cast<double>(device.global_memory_bytes) / (1ull << 30));
      });
  nb::class_<DeviceProbe>(module, "DeviceProbe", "The device, or why there is none")
      .def_ro("device", &DeviceProbe::device)
      .def_ro("reason", &DeviceProbe::reason);
  module.def("probe_device", &probe_device, nb::rv_policy::reference, "The current device, probed once per process; never raises");
}

}  // namespace kgate::python
