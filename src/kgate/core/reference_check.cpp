#include "kgate/core/reference_check.hpp"

#include <bit>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "kgate/base/parallel.hpp"
#include "kgate/base/random.hpp"
#include "kgate/base/text.hpp"
#include "kgate/core/host_values.hpp"
#include "kgate/core/problem.hpp"

namespace kgate {
namespace {

// A quiet NaN whose payload no arithmetic produces: an element still holding it was never written.
constexpr std::uint64_t kPoisonBits = 0x7FF8A5A5A5A5A5A5ull;

bool is_poison(double value) { return std::bit_cast<std::uint64_t>(value) == kPoisonBits; }
bool same_bits(double a, double b) { return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b); }

// What the reference computes (the tensors the check compares); inputs it only reads.
bool computed(Access access) { return access == Access::output || access == Access::inout; }
bool read_only(Access access) { return access == Access::input; }

// How many values ProblemInstance hands the reference: none for scratch, which only variants use.
std::size_t host_count(const TensorSpec& spec) { return computed(spec.access) || read_only(spec.access) ? spec.count : 0; }

std::string number(double value) { return printf_string("%.9g", value); }

HostTensors draw_inputs(const std::vector<TensorSpec>& specs, std::uint64_t seed) {
  HostTensors inputs(specs.size());
  for (std::size_t t = 0; t < specs.size(); ++t)
    if (specs[t].access == Access::input || specs[t].access == Access::inout)
      inputs[t] = generate_on_host(specs[t], derive_seed(seed, specs[t].name));
  return inputs;
}

// The tensors as ProblemInstance hands them to the reference, the outputs poisoned instead of zeroed.
HostTensors poisoned(const std::vector<TensorSpec>& specs, const HostTensors& inputs) {
  HostTensors tensors = inputs;
  for (std::size_t t = 0; t < specs.size(); ++t)
    if (specs[t].access == Access::output) tensors[t].assign(specs[t].count, std::bit_cast<double>(kPoisonBits));
  return tensors;
}

// How many of a tensor's elements `bad` holds for, and the first of them.
struct Finding {
  std::size_t count = 0, first = 0;
};
Finding find(std::size_t size, const std::function<bool(std::size_t)>& bad) {
  Finding finding;
  for (std::size_t i = 0; i < size; ++i)
    if (bad(i) && finding.count++ == 0) finding.first = i;
  return finding;
}

std::string of(const Finding& f, std::size_t size, const TensorSpec& spec) {
  return std::to_string(f.count) + " of " + std::to_string(size) + " elements of '" + spec.name + "'";
}

class Checker {
 public:
  Checker(const std::vector<TensorSpec>& specs, const HostTensors& inputs, std::vector<std::string>& problems)
      : specs_(specs), inputs_(inputs), problems_(problems) {}

  // One run's tensors: computed ones written and finite, inputs as drawn, no tensor resized.
  void check_run(const std::string& function, const HostTensors& got) {
    for (std::size_t t = 0; t < specs_.size(); ++t) {
      const TensorSpec& spec = specs_[t];
      const std::vector<double>& values = got[t];
      if (values.size() != host_count(spec)) {
        problems_.push_back(function + " resized '" + spec.name + "' from " + std::to_string(host_count(spec)) + " to " +
                            std::to_string(values.size()) + " values");
        continue;
      }
      if (computed(spec.access)) {
        if (const Finding f = find(values.size(), [&](std::size_t i) { return is_poison(values[i]); }); f.count > 0)
          problems_.push_back(function + " left " + of(f, values.size(), spec) + " unwritten (still the NaN poison; first: element " +
                              std::to_string(f.first) + ")");
        if (const Finding f = find(values.size(), [&](std::size_t i) { return !is_poison(values[i]) && !std::isfinite(values[i]); });
            f.count > 0)
          problems_.push_back(function + " wrote " + of(f, values.size(), spec) + " as NaN or Inf (first: element " +
                              std::to_string(f.first) + " = " + number(values[f.first]) + ")");
      } else if (read_only(spec.access)) {
        if (const Finding f = find(values.size(), [&](std::size_t i) { return !same_bits(values[i], inputs_[t][i]); }); f.count > 0)
          problems_.push_back(function + " changed " + of(f, values.size(), spec) + ", an input (first: element " +
                              std::to_string(f.first) + "): it may write only output and in-place tensors");
      }
    }
  }

  // Two runs on the same inputs, the second on one thread, must agree bit for bit.
  void check_repeat(const std::string& function, const HostTensors& first, const HostTensors& second) {
    for (std::size_t t = 0; t < specs_.size(); ++t) {
      if (first[t].size() != second[t].size() || first[t].size() != host_count(specs_[t])) continue;  // said by check_run
      const Finding f = find(first[t].size(), [&](std::size_t i) { return !same_bits(first[t][i], second[t][i]); });
      if (f.count > 0)
        problems_.push_back(function + " gave other values in a second run on the same inputs for " + of(f, first[t].size(), specs_[t]) +
                            " (first: element " + std::to_string(f.first) + ", " + number(first[t][f.first]) + " then " +
                            number(second[t][f.first]) + " on one thread): it reads memory it never wrote, keeps state between calls or " +
                            "gives values that depend on how its work is split over threads");
    }
  }

 private:
  const std::vector<TensorSpec>& specs_;
  const HostTensors& inputs_;
  std::vector<std::string>& problems_;
};

}  // namespace

std::string ReferenceCheck::describe() const {
  std::string out = family + "'s host reference at " + shape;
  if (passed()) return out + " passed";
  out += ": " + std::to_string(problems.size()) + (problems.size() == 1 ? " problem" : " problems");
  for (const std::string& problem : problems) out += "\n  " + problem;
  return out;
}

Shape smallest_host_reference_shape(const Family& family) {
  const Shape* smallest = nullptr;
  const std::vector<Shape> shapes = family.test_shapes();
  for (const Shape& shape : shapes)
    if (!family.device_reference(shape) && (!smallest || instance_bytes(family, shape) < instance_bytes(family, *smallest)))
      smallest = &shape;
  if (!smallest)
    throw std::logic_error("family " + family.name() + ": every test shape names a device reference, so none checks the host reference");
  return *smallest;
}

ReferenceCheck check_host_reference(const Family& family, const Shape& shape, std::uint64_t seed) {
  ReferenceCheck result{.family = family.name(), .shape = shape.id(), .problems = {}};
  const std::vector<TensorSpec> specs = family.tensors(shape);
  const HostTensors inputs = draw_inputs(specs, seed);
  Checker checker(specs, inputs, result.problems);

  // The second run on one thread: a reference whose work is spread over the host's threads
  // (parallel.hpp) must give the values it gives alone.
  HostTensors first = poisoned(specs, inputs), second = poisoned(specs, inputs);
  family.reference(shape, first);
  {
    const ScopedHostThreads one_thread(1);
    family.reference(shape, second);
  }
  checker.check_run("reference()", first);
  checker.check_repeat("reference()", first, second);

  HostTensors first_baseline = poisoned(specs, inputs), second_baseline = poisoned(specs, inputs);
  if (family.baseline(shape, first_baseline)) {
    const ScopedHostThreads one_thread(1);
    family.baseline(shape, second_baseline);
    checker.check_run("baseline()", first_baseline);
    checker.check_repeat("baseline()", first_baseline, second_baseline);
  }
  return result;
}

}  // namespace kgate
