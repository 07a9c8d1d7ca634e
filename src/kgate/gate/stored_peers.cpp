#include "kgate/gate/stored_peers.hpp"

#include <algorithm>
#include <set>

#include "kgate/base/figures.hpp"
#include "kgate/base/text.hpp"
#include "kgate/gate/baseline.hpp"
#include "kgate/results/results_io.hpp"
#include "kgate/results/roofline.hpp"

namespace kgate {
namespace {

constexpr std::string_view kPeersPrefix = "peers.";

// The extra entries that name a library the peers call; the others ("peers.listing",
// "peers.command_line", ...) describe one run, not the environment.
constexpr const char* kLibraries[] = {"peers.torch", "peers.cuda", "peers.cudnn", "peers.cublas", "peers.triton", "peers.liger_kernel"};

}  // namespace

PeerEnvironment peer_environment(const RunContext& context) {
  PeerEnvironment environment;
  if (!context.gpu_name.empty()) environment["gpu"] = context.gpu_name;
  if (context.driver_version > 0) environment["driver"] = format_cuda_version(context.driver_version);
  if (context.sm_clock_mhz_default > 0) environment["sm_clock_mhz_default"] = printf_string("%.0f", context.sm_clock_mhz_default);
  if (context.memory_clock_mhz > 0) environment["memory_clock_mhz"] = printf_string("%.0f", context.memory_clock_mhz);
  for (const char* library : kLibraries)
    if (const auto it = context.extra.find(library); it != context.extra.end() && !it->second.empty()) environment[library] = it->second;
  return environment;
}

std::vector<std::string> environment_differences(const PeerEnvironment& recorded, const PeerEnvironment& here) {
  std::vector<std::string> differences;
  for (const auto& [name, value] : recorded) {
    const auto it = here.find(name);
    if (it != here.end() && it->second == kNotInstalled) continue;
    if (it == here.end() || it->second != value)
      differences.push_back(name + ": " + value + " recorded, " + (it == here.end() ? "unknown" : it->second) + " here");
  }
  for (const auto& [name, value] : here)
    if (!recorded.contains(name) && value != kNotInstalled) differences.push_back(name + ": not recorded, " + value + " here");
  return differences;
}

std::vector<std::string> shapes_without_peers(const RunResults& stored, const RunResults& run) {
  std::map<std::string, std::set<std::string>> stored_shapes;  // family -> shapes with a stored peer
  for (const BenchmarkRecord& r : stored.benchmarks)
    if (r.role == "peer") stored_shapes[r.family].insert(r.shape);
  std::set<std::string> missing;
  for (const BenchmarkRecord& r : run.benchmarks) {
    const auto family = stored_shapes.find(r.family);
    if (r.role != "peer" && family != stored_shapes.end() && !family->second.contains(r.shape)) missing.insert(r.family + " " + r.shape);
  }
  return {missing.begin(), missing.end()};
}

RunResults stored_peers_of(const RunResults& run, const std::string& source) {
  RunResults stored;
  stored.has_kgate_block = true;
  stored.context = run.context;
  stored.context.calibration = {};  // the run that reuses them has its own ceilings
  stored.context.wall_s.clear();
  std::erase_if(stored.context.extra, [](const auto& entry) { return !entry.first.starts_with(kPeersPrefix); });
  for (const BenchmarkRecord& r : run.benchmarks) {
    if (r.role != "peer") continue;
    BenchmarkRecord entry = r;
    for (auto& [key, value] : baseline_provenance(r, run.context, source)) entry.provenance[key] = std::move(value);
    entry.provenance.erase("figures");  // recorded from a run that reused them: they are the stored file's now
    stored.benchmarks.push_back(std::move(entry));
  }
  if (stored.benchmarks.empty())
    throw ResultsError(source + ": $.benchmarks: no peer benchmark (role \"peer\") to record: run the peers (scripts/run.sh measures " +
                       "them; docs/peers.md) and give that run");
  return stored;
}

void add_stored_peers(RunResults& run, const RunResults& stored, const std::string& stored_path) {
  for (const BenchmarkRecord& r : run.benchmarks)
    if (r.role == "peer")
      throw ResultsError("the run already has peers (" + r.name + "): reuse stored peers only in a run that did not measure its own");
  for (const BenchmarkRecord& r : stored.benchmarks) {
    if (r.role != "peer") continue;
    BenchmarkRecord& added = run.benchmarks.emplace_back(r);
    added.provenance["figures"] = "reused from " + stored_path;
    if (added.status == BenchmarkStatus::ok) place_record_on_roofline(added, run.context.calibration);
  }
  for (const auto& [key, value] : stored.context.extra)
    if (key.starts_with(kPeersPrefix)) run.context.extra[key] = value;
  run.context.extra["peers.figures"] = "reused from " + stored_path + ", measured " + stored.context.date + " on " + stored.context.host;
}

}  // namespace kgate
