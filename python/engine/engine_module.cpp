// kgate._engine: the harness's measurement engine for Python. Built only with the CUDA Toolkit
// (python/CMakeLists.txt); the package reaches it through kgate.engine.engine(), which raises
// kgate.EngineUnavailable where it was not built or does not load.
#include "bindings.hpp"

NB_MODULE(_engine, module) {
  module.doc() = "kgate's measurement engine (C++), bound for the kgate package";
  // A suite's families live until the interpreter ends, and torch.compile's caches keep them (and
  // the engine's Tolerance objects they hold) past nanobind's own teardown: its report of them as
  // leaked, printed at every exit of a suite with compiled variants, would be no leak of the engine.
  nanobind::set_leak_warnings(false);
  kgate::python::bind_device(module);
  kgate::python::bind_check(module);
  kgate::python::bind_suite(module);
}
