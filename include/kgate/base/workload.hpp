#pragma once
// Workloads: a transformer layer's step (decode, prefill) as the sequence of kernel families it
// runs, with every shape derived from a model configuration. Declared once, like the families:
// one file per workload and one per model under workloads/, each registering itself with one line
// (KGATE_REGISTER_WORKLOAD, KGATE_REGISTER_MODEL); kgate_bench measures them as benchmarks and
// `kgate story` tells them (docs/story.md).
//
// A workload benchmark is named like a kernel benchmark, <family>/<variant>/<shape id>, with
// "workload" as the family, "<model>-<workload>" as the variant and the workload's point as the
// shape: "workload/llama3-8b-decode/b:1/l:4096/bf16". Variants chosen on the command line instead
// of the default ones are part of the name ("llama3-8b-decode+gemv=cublas"), so that a baseline is
// never compared with a run of other kernels.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kgate/base/model_config.hpp"
#include "kgate/base/named_registry.hpp"
#include "kgate/base/shape.hpp"

namespace kgate {

inline constexpr const char* kWorkloadFamily = "workload";

// One kernel of a step: which family solves it, at which shape, and which of the family's variants
// to run, best first (the first one registered, supported by the device and accepting the shape).
struct WorkloadStep {
  std::string label;                    // "qkv_proj"
  std::string family;                   // "gemv"
  std::vector<std::string> preference;  // "vectorized", "cublas", ...
  Shape shape;
};

// A dimension of a workload's point and the `kgate story` option that sets it.
struct WorkloadParameter {
  std::string dim;      // "b"
  std::string option;   // "batch": --batch, --sweep-batch
  std::string meaning;  // "sequences in the batch"
};

class Workload {
 public:
  virtual ~Workload() = default;

  virtual std::string name() const = 0;  // "decode": lower case letters, digits and '_'
  virtual std::string description() const = 0;
  virtual std::vector<WorkloadParameter> parameters() const = 0;
  // The data type of the layer's tensors: the last part of a point's id.
  virtual DType dtype() const { return DType::bf16; }
  // The point `kgate story` tells when no option is given, the points of the benchmark suite (for
  // every model), and the points of the story's scaling section around a point.
  virtual Shape default_point() const = 0;
  virtual std::vector<Shape> bench_points() const = 0;
  virtual std::map<std::string, std::vector<std::int64_t>> default_sweep() const = 0;
  // Tokens the step processes at a point: the divisor of the time per token.
  virtual std::int64_t tokens(const Shape& point) const = 0;
  virtual std::vector<WorkloadStep> steps(const ModelConfig& model, const Shape& point) const = 0;

  // A point from its parameters' values; throws std::invalid_argument naming a missing or extra one.
  Shape point(const std::map<std::string, std::int64_t>& values) const;
};

class WorkloadRegistry {
 public:
  static WorkloadRegistry& instance();

  bool add_workload(std::unique_ptr<Workload> workload);
  bool add_model(ModelConfig model);

  const Workload* find_workload(std::string_view name) const;
  const ModelConfig* find_model(std::string_view name) const;
  std::vector<const Workload*> workloads() const;  // by name
  std::vector<const ModelConfig*> models() const;  // by name
  // Throws std::logic_error listing every duplicate or malformed name.
  void validate() const;

 private:
  NamedRegistry<Workload> workloads_;
  NamedRegistry<ModelConfig> models_;
};

// Which workload benchmark: the parts of its name.
struct WorkloadSpec {
  std::string model;                            // "llama3-8b"
  std::string workload;                         // "decode"
  std::map<std::string, std::string> chosen{};  // family -> variant, instead of the step's preference
  Shape point;

  std::string variant() const;  // "llama3-8b-decode", "llama3-8b-decode+gemv=cublas"
  std::string name() const;     // "workload/<variant>/<point id>"
  // Inverse of name(); checks the model and the workload against the registry and the point's
  // dimensions against the workload's parameters. Throws std::invalid_argument saying what is wrong.
  static WorkloadSpec parse(std::string_view name, const WorkloadRegistry& registry = WorkloadRegistry::instance());
};

// The step's variants in the order to try: the one chosen for its family, else its preference.
std::vector<std::string> candidate_variants(const WorkloadStep& step, const WorkloadSpec& spec);

}  // namespace kgate

// KGATE_REGISTER_WORKLOAD(DecodeWorkload);
#define KGATE_REGISTER_WORKLOAD(WorkloadT) \
  KGATE_REGISTER_AT_STARTUP(workload, ::kgate::WorkloadRegistry::instance().add_workload(std::make_unique<WorkloadT>()))

// KGATE_REGISTER_MODEL({.name = "llama3-8b", ...}); the braces are a kgate::ModelConfig.
#define KGATE_REGISTER_MODEL(...) \
  KGATE_REGISTER_AT_STARTUP(model, ::kgate::WorkloadRegistry::instance().add_model(::kgate::ModelConfig __VA_ARGS__))
