#pragma once
// The parts of kgate._engine, one binding per harness module it exposes; engine_module.cpp calls
// each. The suite's binding (timing a Python variant with the measurement engine) is added here
// the same way: a bind_suite(module) in a file of its own.
#include <nanobind/nanobind.h>

namespace kgate::python {

// kgate._engine.Device (results' DeviceInfo), DeviceProbe and probe_device() (measure/device.hpp).
void bind_device(nanobind::module_& module);

}  // namespace kgate::python
