// kgate._engine: the harness's measurement engine for Python. Built only with the CUDA Toolkit
// (python/CMakeLists.txt); the package reaches it through kgate.engine.engine(), which raises
// kgate.EngineUnavailable where it was not built or does not load.
#include "bindings.hpp"

NB_MODULE(_engine, module) {
  module.doc() = "kgate's measurement engine (C++), bound for the kgate package";
  kgate::python::bind_device(module);
  kgate::python::bind_check(module);
  kgate::python::bind_suite(module);
}
