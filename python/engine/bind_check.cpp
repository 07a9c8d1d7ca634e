// The reference check for Python (core/accuracy.hpp): a Python family computes its reference and
// the variant's outputs; the comparison, its tolerances and its poison are the C++ harness's own,
// so that a Python variant passes or fails by the rule a C++ variant does. Also the seeds and
// shape ids (base/), so that a Python benchmark is named and seeded as a C++ one is.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>

#include "bindings.hpp"
#include "kgate/base/random.hpp"
#include "kgate/base/shape.hpp"
#include "kgate/core/accuracy.hpp"

namespace nb = nanobind;

namespace kgate::python {
namespace {

DType dtype_named(const std::string& name) {
  const std::optional<DType> dtype = parse_dtype(name);
  if (!dtype) throw std::invalid_argument("unknown dtype '" + name + "' (bf16, fp16, fp32 or i32)");
  return *dtype;
}

// The tensors cross as bytes (a host copy's raw contents) rather than as arrays: the check copies
// them to the host anyway, and bytes need no array library on either side.
AccuracyReport compare_tensor(std::string tensor, const std::string& dtype, const nb::bytes& got, const nb::bytes& expected,
                              const Tolerance& tolerance) {
  if (expected.size() % sizeof(double) != 0)
    throw std::invalid_argument("compare(" + tensor + "): the expected values are " + std::to_string(expected.size()) +
                                " bytes, not a whole number of float64 values");
  std::vector<double> values(expected.size() / sizeof(double));
  std::memcpy(values.data(), expected.c_str(), expected.size());
  const std::span<const std::byte> raw(reinterpret_cast<const std::byte*>(got.c_str()), got.size());
  return compare(std::move(tensor), dtype_named(dtype), raw, values, tolerance);
}

}  // namespace

void bind_check(nb::module_& module) {
  nb::class_<Tolerance>(module, "Tolerance",
                        "Per element |got - ref| <= max_ulps * ulp(ref) + abs_floor (ulp of the output dtype), and over the "
                        "tensor ||got - ref|| / ||ref|| <= rel_l2")
      .def(nb::init<double, double, double>(), nb::arg("rel_l2") = 1e-2, nb::arg("max_ulps") = 2.0, nb::arg("abs_floor") = 0.0)
      .def_rw("rel_l2", &Tolerance::rel_l2)
      .def_rw("max_ulps", &Tolerance::max_ulps)
      .def_rw("abs_floor", &Tolerance::abs_floor)
      .def("__repr__", [](const Tolerance& t) {
        return "Tolerance(rel_l2=" + std::to_string(t.rel_l2) + ", max_ulps=" + std::to_string(t.max_ulps) +
               ", abs_floor=" + std::to_string(t.abs_floor) + ")";
      });
  module.def(
      "default_tolerance", [](const std::string& dtype) { return default_tolerance(dtype_named(dtype)); }, nb::arg("dtype"),
      "The documented default tolerance of an output dtype (docs/architecture.md, \"Tolerances\")");

  nb::class_<AccuracyReport>(module, "AccuracyReport", "One output compared with its reference")
      .def_ro("tensor", &AccuracyReport::tensor)
      .def_ro("rel_l2", &AccuracyReport::rel_l2)
      .def_ro("max_abs", &AccuracyReport::max_abs)
      .def_ro("violations", &AccuracyReport::violations)
      .def_ro("non_finite", &AccuracyReport::non_finite)
      .def_ro("unwritten", &AccuracyReport::unwritten)
      .def("passed", &AccuracyReport::passed)
      .def("describe", &AccuracyReport::describe);
  module.def("compare", &compare_tensor, nb::arg("tensor"), nb::arg("dtype"), nb::arg("got"), nb::arg("expected"), nb::arg("tolerance"),
             "Compares a tensor's raw bytes (a host copy of the device's) with its reference values (float64 bytes)");
  module.def("poison_bits_16", &poison_bits_16, "The 16-bit pattern outputs are poisoned with (a NaN no arithmetic produces)");
  module.def("poison_bits_32", &poison_bits_32, "The 32-bit pattern outputs are poisoned with");

  module.def("session_seed", &session_seed, "KGATE_SEED when set, else fresh entropy chosen once per process (correctness)");
  module.def("benchmark_seed", &benchmark_seed, "KGATE_SEED when set, else a fixed value (benchmarks time the same work)");
  module.def("derive_seed", &derive_seed, nb::arg("base"), nb::arg("label"), "A case's seed from a base seed and its name");
  module.def(
      "shape_id",
      [](const std::vector<std::pair<std::string, std::int64_t>>& dims, const std::string& dtype) {
        std::vector<Dim> shape_dims;
        for (const auto& [name, value] : dims) shape_dims.push_back({name, value});
        return Shape(std::move(shape_dims), dtype_named(dtype)).id();
      },
      nb::arg("dims"), nb::arg("dtype"), "\"m:64/n:4096/bf16\": a shape's id, checked as a C++ shape's is");
}

}  // namespace kgate::python
