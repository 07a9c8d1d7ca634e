// The workload declarations (workloads/) against the kernel families they name: every step's
// shape is one its family accepts (the same dimensions, in the family's order), every preferred
// variant exists, the shapes follow from the model configuration, and the benchmark names parse
// back. Needs no GPU: the families and variants are in the registry without one.
#include "kgate/base/workload.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "kgate/suite/workload_benchmarks.hpp"
#include "kgate/core/registry.hpp"

namespace {

using kgate::ModelConfig;
using kgate::Shape;
using kgate::Workload;
using kgate::WorkloadRegistry;
using kgate::WorkloadSpec;
using kgate::WorkloadStep;

const WorkloadRegistry& workloads() { return WorkloadRegistry::instance(); }

std::vector<std::string> dim_names(const Shape& shape) {
  std::vector<std::string> names;
  for (const kgate::Dim& d : shape.dims()) names.push_back(d.name);
  return names;
}

// Every point a workload is measured at: the suite's, its default, and its story sweep.
std::vector<Shape> points_of(const Workload& w) {
  std::vector<Shape> points = w.bench_points();
  const Shape default_point = w.default_point();
  points.push_back(default_point);
  const auto sweep = w.default_sweep();
  for (const auto& [dim, values] : sweep)
    for (std::int64_t v : values) {
      std::map<std::string, std::int64_t> at;
      for (const kgate::Dim& d : default_point.dims()) at[d.name] = d.value;
      at[dim] = v;
      points.push_back(w.point(at));
    }
  return points;
}

const WorkloadStep& step_named(const std::vector<WorkloadStep>& steps, const std::string& label) {
  for (const WorkloadStep& s : steps)
    if (s.label == label) return s;
  ADD_FAILURE() << "no step " << label;
  return steps.front();
}

TEST(Workloads, RegistryIsConsistent) {
  EXPECT_NO_THROW(workloads().validate());
  EXPECT_NE(workloads().find_workload("decode"), nullptr);
  EXPECT_NE(workloads().find_workload("prefill"), nullptr);
  EXPECT_NE(workloads().find_model("llama3-8b"), nullptr);
  EXPECT_NE(workloads().find_model("llama3-70b"), nullptr);
}

TEST(Workloads, EveryStepIsAShapeItsFamilyAccepts) {
  const kgate::Registry& registry = kgate::Registry::instance();
  for (const ModelConfig* model : workloads().models())
    for (const Workload* w : workloads().workloads())
      for (const Shape& point : points_of(*w)) {
        SCOPED_TRACE(model->name + " " + w->name() + " " + point.id());
        for (const WorkloadStep& step : w->steps(*model, point)) {
          SCOPED_TRACE(step.label);
          const kgate::Family* family = registry.find_family(step.family);
          ASSERT_NE(family, nullptr) << "family " << step.family << " is not registered";
          // A family may have optional dimensions (prefill attention's causal:1): the step's must be
          // those of one of the family's own shapes.
          const std::vector<Shape> declared = family->bench_shapes();
          EXPECT_TRUE(std::any_of(declared.begin(), declared.end(),
                                  [&](const Shape& shape) {
                                    return dim_names(shape) == dim_names(step.shape) && shape.dtype() == step.shape.dtype();
                                  }))
              << step.shape.id() << " has the dimensions of none of " << step.family << "'s benchmark shapes";
          EXPECT_NO_THROW(family->tensors(step.shape));
          EXPECT_GT(family->min_bytes(step.shape), 0);
          ASSERT_FALSE(step.preference.empty());
          for (const std::string& variant : step.preference)
            EXPECT_NE(registry.find_variant(step.family + "/" + variant), nullptr) << step.family << "/" << variant;
        }
      }
}

// The layer's shapes from the model: Llama's fused QKV has (Hq + 2·Hkv)·d outputs, gate/up 2·I.
TEST(Workloads, ShapesFollowTheModel) {
  for (const ModelConfig* m : workloads().models()) {
    SCOPED_TRACE(m->name);
    const Workload& decode = *workloads().find_workload("decode");
    const std::vector<WorkloadStep> steps = decode.steps(*m, decode.point({{"b", 3}, {"l", 1000}}));
    const std::vector<std::string> order = {"input_norm",          "qkv_proj",     "rope",         "attention", "o_proj",
                                            "post_attention_norm", "gate_up_proj", "silu_and_mul", "down_proj"};
    std::vector<std::string> labels;
    for (const WorkloadStep& s : steps) labels.push_back(s.label);
    EXPECT_EQ(labels, order);
    const Shape& qkv = step_named(steps, "qkv_proj").shape;
    EXPECT_EQ(qkv.at("m"), 3);
    EXPECT_EQ(qkv.at("n"), (m->q_heads + 2 * m->kv_heads) * m->head_dim);
    EXPECT_EQ(qkv.at("k"), m->hidden);
    EXPECT_EQ(step_named(steps, "o_proj").shape.at("k"), m->q_heads * m->head_dim);
    EXPECT_EQ(step_named(steps, "gate_up_proj").shape.at("n"), 2 * m->intermediate);
    EXPECT_EQ(step_named(steps, "down_proj").shape.at("k"), m->intermediate);
    EXPECT_EQ(step_named(steps, "silu_and_mul").shape.at("i"), m->intermediate);
    const Shape& attention = step_named(steps, "attention").shape;
    EXPECT_EQ(step_named(steps, "attention").family, "decode_attention");
    EXPECT_EQ(attention.at("b"), 3);
    EXPECT_EQ(attention.at("l"), 1000);
    EXPECT_EQ(attention.at("hkv"), m->kv_heads);
    EXPECT_EQ(decode.tokens(decode.point({{"b", 3}, {"l", 1000}})), 3);

    const Workload& prefill = *workloads().find_workload("prefill");
    const Shape point = prefill.point({{"b", 2}, {"p", 300}});
    const std::vector<WorkloadStep> p_steps = prefill.steps(*m, point);
    EXPECT_EQ(step_named(p_steps, "qkv_proj").shape.at("m"), 600);
    EXPECT_EQ(step_named(p_steps, "qkv_proj").preference, std::vector<std::string>{"cublas"});
    EXPECT_EQ(step_named(p_steps, "attention").family, "prefill_attention");
    EXPECT_EQ(step_named(p_steps, "attention").shape.at("s"), 300);
    EXPECT_EQ(step_named(p_steps, "attention").shape.at("causal"), 1);
    EXPECT_EQ(prefill.tokens(point), 600);
  }
}

// Every point measured (decode at batch 64 and context 16384 with Llama-3-70B the largest) fits an
// 80 GB H100 with room for the flush buffer, cuBLAS' workspace and the counter pass.
TEST(Workloads, EveryPointFitsOneGpu) {
  const kgate::Registry& registry = kgate::Registry::instance();
  constexpr double kLimit = 60.0 * (1ull << 30);
  for (const ModelConfig* model : workloads().models())
    for (const Workload* w : workloads().workloads())
      for (const Shape& point : points_of(*w)) {
        double bytes = 0;
        for (const WorkloadStep& s : w->steps(*model, point))
          if (const kgate::Family* family = registry.find_family(s.family))
            bytes += static_cast<double>(kgate::instance_bytes(*family, s.shape));
        EXPECT_LT(bytes, kLimit) << model->name << " " << w->name() << " " << point.id();
      }
}

TEST(WorkloadSpec, NamesRoundTrip) {
  const WorkloadSpec spec = WorkloadSpec::parse("workload/llama3-8b-decode/b:64/l:4096/bf16");
  EXPECT_EQ(spec.model, "llama3-8b");
  EXPECT_EQ(spec.workload, "decode");
  EXPECT_TRUE(spec.chosen.empty());
  EXPECT_EQ(spec.point.at("b"), 64);
  EXPECT_EQ(spec.name(), "workload/llama3-8b-decode/b:64/l:4096/bf16");

  // Chosen variants are part of the name, in family order whatever the order given.
  const WorkloadSpec chosen = WorkloadSpec::parse("workload/llama3-70b-decode+gemv=cublas+decode_attention=naive/b:1/l:1024/bf16");
  EXPECT_EQ(chosen.model, "llama3-70b");
  EXPECT_EQ(chosen.chosen.at("gemv"), "cublas");
  EXPECT_EQ(chosen.chosen.at("decode_attention"), "naive");
  EXPECT_EQ(chosen.variant(), "llama3-70b-decode+decode_attention=naive+gemv=cublas");
  EXPECT_EQ(WorkloadSpec::parse(chosen.name()).name(), chosen.name());

  const WorkloadStep step{"qkv_proj", "gemv", {"vectorized", "cublas"}, Shape({{"m", 1}}, kgate::DType::bf16)};
  EXPECT_EQ(kgate::candidate_variants(step, spec), step.preference);
  EXPECT_EQ(kgate::candidate_variants(step, chosen), std::vector<std::string>{"cublas"});
}

TEST(WorkloadSpec, RefusesWhatNamesNoWorkloadBenchmark) {
  const auto message = [](const std::string& name) {
    try {
      WorkloadSpec::parse(name);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("rmsnorm/vectorized/m:1/n:4096/bf16").find("expected workload/"), std::string::npos);
  EXPECT_NE(message("workload/gpt9-decode/b:1/l:4096/bf16").find("unknown model 'gpt9'"), std::string::npos);
  EXPECT_NE(message("workload/llama3-8b-train/b:1/l:4096/bf16").find("unknown workload 'train'"), std::string::npos);
  EXPECT_NE(message("workload/llama3-8b-decode/b:1/p:4096/bf16").find("b:N/l:N/bf16"), std::string::npos);
  EXPECT_NE(message("workload/llama3-8b-decode+gemv/b:1/l:4096/bf16").find("<family>=<variant>"), std::string::npos);
  EXPECT_NE(message("workload/llama3-8b-decode").find("no point"), std::string::npos);
}

TEST(WorkloadPlans, SuiteAndNamedPlans) {
  const std::vector<kgate::WorkloadPlan> suite = kgate::plan_workloads({});
  std::set<std::string> names;
  for (const auto& plan : suite) names.insert(plan.name);
  EXPECT_TRUE(names.contains("workload/llama3-8b-decode/b:1/l:4096/bf16"));
  EXPECT_TRUE(names.contains("workload/llama3-8b-decode/b:64/l:4096/bf16"));
  EXPECT_TRUE(names.contains("workload/llama3-8b-prefill/b:1/p:2048/bf16"));
  EXPECT_TRUE(names.contains("workload/llama3-70b-decode/b:1/l:4096/bf16"));

  const auto named = kgate::plan_workloads(
      {"workload/llama3-8b-decode+gemv=cublas/b:2/l:100/bf16", "workload/llama3-8b-decode+gemv=cublas/b:2/l:100/bf16"});
  ASSERT_EQ(named.size(), 1u);  // the same benchmark once
  EXPECT_EQ(named.front().steps.size(), 9u);
  EXPECT_THROW(kgate::plan_workloads({"workload/llama3-8b-decode+prefill_attention=naive/b:2/l:100/bf16"}), std::invalid_argument);
}

}  // namespace
