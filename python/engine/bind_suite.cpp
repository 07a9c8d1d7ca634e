// The suite for Python (suite/suite_process.hpp): a Python suite's variants are CallableBenchmarks,
// measured by the same SuiteProcess as kgate_bench's, with kgate_bench's --kgate_* flags
// (bench/flags.hpp). python/kgate/runner.py is the front door: it turns families into benchmarks,
// drives the process's steps and chains the processes; nothing here times or decides anything
// that kgate_bench does not.
//
// Every call from the engine into Python (instantiate, prepare, make_copies, launch, check) runs with the
// GIL held: the engine is only ever entered from Python and never releases it, so a Python launch
// runs on the thread whose CUPTI correlation and stream capture the timer set up.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "bindings.hpp"
#include "flags.hpp"
#include "kgate/base/text.hpp"
#include "kgate/core/check.hpp"
#include "kgate/core/family.hpp"
#include "kgate/measure/device.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/suite/next_process.hpp"
#include "kgate/suite/suite_process.hpp"

namespace nb = nanobind;

namespace kgate::python {
namespace {

// Calls into Python. kgate.Unsupported skips the benchmark with its message (UnsupportedShape,
// as a C++ launch that cannot run a shape); any other exception fails it with its type and
// message (the record's error), and its traceback, which the user needs to find the line, goes to
// stderr.
template <class Call>
auto from_python(Call&& call) {
  try {
    return call();
  } catch (const nb::python_error& e) {
    const std::string message = nb::cast<std::string>(nb::str(e.value()));
    if (e.matches(nb::module_::import_("kgate").attr("Unsupported"))) throw UnsupportedShape(message);
    std::fprintf(stderr, "%s\n", e.what());
    throw std::runtime_error(nb::cast<std::string>(nb::str(e.type().attr("__name__"))) + ": " + message);
  }
}

// The instance a Python family made (kgate/instance.py, Instance): its bytes and four methods.
CallableInstance instance_from_python(const nb::object& instance) {
  CallableInstance made;
  made.bytes_per_copy = nb::cast<std::size_t>(instance.attr("bytes_per_copy"));
  made.prepare = [prepare = nb::object(instance.attr("prepare"))](bool keep_reference) {
    return from_python([&] { return nb::cast<Provenance>(prepare(keep_reference)); });
  };
  made.make_copies = [make_copies = nb::object(instance.attr("make_copies"))](int copies) { from_python([&] { make_copies(copies); }); };
  made.launch = [launch = nb::object(instance.attr("launch"))](int copy, cudaStream_t stream) {
    from_python([&] { launch(copy, reinterpret_cast<std::uintptr_t>(stream)); });
  };
  made.check = [check = nb::object(instance.attr("check"))] {
    return from_python([&] {
      return InstanceCheck{.tensors = nb::cast<std::vector<AccuracyReport>>(check()), .reference = "the family's fp64 reference"};
    });
  };
  return made;
}

CallableBenchmark callable_benchmark(std::string name, std::string family, std::string variant, std::string shape, std::string role,
                                     std::string follows, double min_bytes, double flops, bool hot_headline, bool read_dominated,
                                     bool checked_at_any_size, Provenance provenance, nb::object instantiate) {
  return {.name = std::move(name),
          .family = std::move(family),
          .variant = std::move(variant),
          .shape = std::move(shape),
          .role = std::move(role),
          .follows = std::move(follows),
          .min_bytes = min_bytes,
          .flops = flops,
          .headline = hot_headline ? TimingMode::hot : TimingMode::cold,
          .read_dominated = read_dominated,
          .checked_at_any_size = checked_at_any_size,
          .provenance = std::move(provenance),
          .instantiate = [instantiate = std::move(instantiate)](std::uint64_t seed) {
            return instance_from_python(from_python([&] { return nb::object(instantiate(seed)); }));
          }};
}

// kgate_bench's flags from a Python suite's argv (argv[0] is the program); what is left over.
nb::tuple parse_flags(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  bench::BenchFlags flags = bench::parse_bench_flags(argc, argv.data());
  std::vector<std::string> rest(argv.begin(), argv.begin() + argc);
  return nb::make_tuple(std::move(flags), std::move(rest));
}

struct MeasuredSummary {
  std::string status, error;
  double median_s = 0;
  std::optional<bool> correct;
  bool context_lost = false;
};

MeasuredSummary summarize(const BenchmarkRecord& r, bool context_lost) {
  return {to_string(r.status), r.error, r.status == BenchmarkStatus::ok ? r.headline_median_s() : 0.0, r.correct, context_lost};
}

// One process of a Python suite's run: a SuiteProcess on the current device, fresh or going on
// from the results the process before handed over (--kgate_resume), which hold `extra` already.
class PythonSuite {
 public:
  PythonSuite(const bench::BenchFlags& flags, const std::string& suite_name, const std::string& source_dir,
              const std::vector<std::string>& command_line, std::vector<CallableBenchmark> benchmarks,
              const std::map<std::string, std::string>& extra)
      : flags_(flags) {
    const DeviceProbe& probe = probe_device();
    if (!probe.device) throw std::runtime_error("no usable GPU: " + probe.reason);
    const auto started = SuiteProcess::Clock::now();
    if (flags.resume.empty()) {
      const SuiteBuild build{suite_name, source_dir, "python", ""};
      process_ = std::make_unique<SuiteProcess>(*probe.device, flags.suite, build, join(command_line, " "), started, std::move(benchmarks));
      process_->add_context(extra);
    } else {
      RunResults handed_over = read_results_file_may_be_empty(flags.resume);  // a claiming shard's first process may claim none
      std::remove(flags.resume.c_str());
      process_ = std::make_unique<SuiteProcess>(*probe.device, flags.suite, std::move(handed_over), started, std::move(benchmarks));
    }
  }

  SuiteProcess& process() { return *process_; }

  MeasuredSummary measure(const std::string& name) {
    const SuiteProcess::Measured measured = process_->measure(name);
    return summarize(measured.record, measured.context_lost);
  }

  std::vector<std::pair<std::string, MeasuredSummary>> records() const {
    std::vector<std::pair<std::string, MeasuredSummary>> out;
    for (const BenchmarkRecord& r : process_->results().benchmarks) out.emplace_back(r.name, summarize(r, false));
    return out;
  }

  // The arguments that go on from here in a fresh process (the results handed over in a file).
  std::vector<std::string> continuation(const std::vector<std::string>& args) const {
    return continuation_args(args, write_handover(process_->results()));
  }

  // The next timing process, started now to wait for hand_over (suite/next_process.hpp).
  void start_next(const std::string& executable, const std::vector<std::string>& args) {
    next_.emplace(NextProcess::start(executable, args));
  }

  // Hands the results so far to the process start_next started, releasing this process's device
  // (PyTorch's memory with it: this process only waits from here on); its exit status.
  int hand_over() {
    if (!next_) throw std::logic_error("hand_over() without start_next()");
    return next_->hand_over(process_->results(), release_device);
  }

  // Writes the results where the flags say (results_path); returns the path, empty for none.
  std::string write() const {
    const std::string path = bench::results_path(flags_, process_->results().context);
    if (!path.empty()) write_results_file(path, to_json(process_->results()));
    return path;
  }

 private:
  bench::BenchFlags flags_;
  std::unique_ptr<SuiteProcess> process_;
  std::optional<NextProcess> next_;
};

}  // namespace

void bind_suite(nb::module_& module) {
  nb::class_<CallableBenchmark>(module, "Benchmark", "A Python variant at one bench shape, as the suite measures it");
  module.def("callable_benchmark", &callable_benchmark, nb::arg("name"), nb::arg("family"), nb::arg("variant"), nb::arg("shape"),
             nb::arg("role"), nb::arg("follows"), nb::arg("min_bytes"), nb::arg("flops"), nb::arg("hot_headline"),
             nb::arg("read_dominated"), nb::arg("checked_at_any_size"), nb::arg("provenance"), nb::arg("instantiate"),
             "instantiate(seed) returns the instance: bytes_per_copy, prepare(keep_reference) -> {provenance}, make_copies(n), "
             "launch(copy, stream), check(); kgate.Unsupported from any of them skips the benchmark");

  nb::class_<bench::BenchFlags>(module, "BenchFlags", "kgate_bench's --kgate_* flags (bench/flags.hpp)")
      .def_ro("out", &bench::BenchFlags::out)
      .def_ro("out_dir", &bench::BenchFlags::out_dir)
      .def_ro("resume", &bench::BenchFlags::resume)
      .def_ro("handover_fd", &bench::BenchFlags::handover_fd)
      .def_ro("list_json", &bench::BenchFlags::list_json)
      .def_ro("help", &bench::BenchFlags::help)
      .def_prop_rw(
          "repetitions", [](const bench::BenchFlags& f) { return f.suite.repetitions; },
          [](bench::BenchFlags& f, std::size_t repetitions) { f.suite.repetitions = repetitions; });
  module.def("parse_flags", &parse_flags, nb::arg("argv"),
             "(flags, the arguments left): raises ValueError naming the flag on a bad value or an unknown --kgate_ flag");
  module.def("usage", &bench::bench_usage, "The --kgate_* flags' help, as kgate_bench --help prints it");
  module.def(
      "suite_benchmark_names",
      [](const bench::BenchFlags& flags, const std::vector<CallableBenchmark>& benchmarks) {
        return suite_benchmark_names(flags.suite, benchmarks);
      },
      nb::arg("flags"), nb::arg("benchmarks"), "The benchmarks' names in the suite's order, in this shard; needs no GPU");

  nb::class_<MeasuredSummary>(module, "Measured", "A benchmark's record as it stands: its status and headline median")
      .def_ro("status", &MeasuredSummary::status)
      .def_ro("error", &MeasuredSummary::error)
      .def_ro("median_s", &MeasuredSummary::median_s)
      .def_ro("correct", &MeasuredSummary::correct)
      .def_ro("context_lost", &MeasuredSummary::context_lost);

  nb::class_<PythonSuite>(module, "Suite", "One timing process of a Python suite's run (suite/suite_process.hpp)")
      .def(nb::init<const bench::BenchFlags&, const std::string&, const std::string&, const std::vector<std::string>&,
                    std::vector<CallableBenchmark>, const std::map<std::string, std::string>&>(),
           nb::arg("flags"), nb::arg("suite"), nb::arg("source_dir"), nb::arg("command_line"), nb::arg("benchmarks"), nb::arg("extra"))
      .def_prop_ro("names", [](PythonSuite& s) { return s.process().names(); })
      .def_prop_ro("others", [](PythonSuite& s) { return s.process().others(); })
      .def_prop_ro("process_index", [](PythonSuite& s) { return s.process().process().index; })
      .def_prop_ro("process_count", [](PythonSuite& s) { return s.process().process().count; })
      .def_prop_ro("needs_calibration", [](PythonSuite& s) { return s.process().needs_calibration(); })
      .def("calibrate", [](PythonSuite& s) { s.process().calibrate(); })
      .def("due", [](PythonSuite& s, const std::string& name) { return s.process().due(name); })
      .def(
          "take", [](PythonSuite& s, const std::string& name) { return s.process().take(name); }, nb::arg("name"),
          "Whether this process measures the benchmark now (due, and claimed by this shard); ask just before measure()")
      .def("measure", &PythonSuite::measure, nb::arg("name"))
      .def("finish_timing", [](PythonSuite& s) { s.process().finish_timing(); })
      .def_prop_ro("counts_first", [](PythonSuite& s) { return s.process().counts_first(); })
      .def_prop_ro("claims_as_it_runs", [](PythonSuite& s) { return s.process().claims_as_it_runs(); })
      .def("count", [](PythonSuite& s) { s.process().count(); })
      .def("records", &PythonSuite::records)
      .def("continuation", &PythonSuite::continuation, nb::arg("args"))
      .def("start_next", &PythonSuite::start_next, nb::arg("executable"), nb::arg("args"),
           "Starts the next timing process now, to wait for hand_over()")
      .def("hand_over", &PythonSuite::hand_over, nb::call_guard<nb::gil_scoped_release>(),
           "Hands the results to the next timing process, releases the device and waits: the run's exit status")
      .def("write", &PythonSuite::write);
  module.def("count_restart", &count_restart, "Counts a restart after a lost context; false once kgate_bench's limit is reached");
  module.def(
      "await_handover", [](int fd) { return await_handover(fd, create_context); }, nb::arg("fd"), nb::call_guard<nb::gil_scoped_release>(),
      "In a timing process started ahead of its turn: makes its context, then waits until the process before hands over "
      "(True) or ends without doing so (False)");
}

}  // namespace kgate::python
