#pragma once
// The parts of kgate._engine, one binding per harness module it exposes; engine_module.cpp calls
// each.
#include <nanobind/nanobind.h>

namespace kgate::python {

// kgate._engine.Device (results' DeviceInfo), DeviceProbe and probe_device() (measure/device.hpp).
void bind_device(nanobind::module_& module);
// The reference check (core/accuracy.hpp: Tolerance, compare, the poison), seeds and shape ids.
void bind_check(nanobind::module_& module);
// The suite (suite/suite_process.hpp) with kgate_bench's flags: Suite, callable_benchmark, parse_flags.
void bind_suite(nanobind::module_& module);

}  // namespace kgate::python
