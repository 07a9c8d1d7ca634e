// kgate peers record | reuse: the peers' figures of a GPU kept beside its baselines and taken into
// a run instead of measured again. What the file holds and when it stands for this machine is the
// library's (include/kgate/gate/stored_peers.hpp); this file reads, writes and says what happened.
#include <filesystem>

#include "args.hpp"
#include "baseline.hpp"
#include "commands.hpp"
#include "kgate/base/escape.hpp"
#include "kgate/gate/stored_peers.hpp"
#include "kgate/results/json_file.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate::cli {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage = R"(usage: kgate peers record [--baseline-dir DIR] RUN.json
       kgate peers reuse --versions VERSIONS.json [--baseline-dir DIR] [-o OUT.json] RUN.json

The peers (PyTorch, torch.compile, Liger-Kernel, cuBLAS, SDPA measured beside kgate's kernels;
docs/peers.md) run as fast at any commit of the suite: their speed depends on the GPU, its clocks,
the driver and the libraries they call. So they are measured once per such environment, recorded
in DIR/<GPU slug>/peers.json, and reused while the environment holds.

record  writes DIR/<slug of RUN's GPU>/peers.json from RUN's peer benchmarks (every one, failed
        and skipped too), each with the run's provenance (commit, date, host, driver, clocks),
        and RUN's environment: GPU, driver, default SM and memory clocks, and the libraries'
        versions the peers' suite recorded (torch, its CUDA, cuDNN, cuBLAS, Triton,
        Liger-Kernel). The file is replaced whole, atomically. Record from a run where every
        peer library is installed (Liger-Kernel too): its figures are what every user of that
        GPU is shown.
reuse   adds the stored peers of RUN's GPU to RUN (in place, or into OUT) when they stand for
        this machine: RUN's GPU, driver and clocks (RUN is the suite's run, just measured here)
        and the libraries in VERSIONS.json (what `torch_peers.py --versions` prints) are those
        recorded, and the file has peers at every shape RUN benchmarks in their families. A
        library recorded but not installed here is no difference: its recorded figures are
        shown. Each reused peer says so in its provenance ("figures": "reused from FILE"), and
        RUN's extra "peers.figures" says where from, when and on which host. Otherwise nothing is
        written and the differences are listed (exit 1): measure the peers instead.

options:
  --baseline-dir DIR     where the baselines live (default: baselines)
  --versions FILE        reuse: a JSON object of the libraries here, "peers.<library>": "version"
  -o, --output FILE      reuse: write RUN with the peers here instead of replacing RUN
  -h, --help             this text

exit status: 0 recorded / reused, 1 not reused (no stored peers for this GPU, or another
environment), 2 bad input or usage
)";

std::string stored_file(const Args& args, const RunResults& run, const std::string& source) {
  return baseline_file_for(args.value("--baseline-dir").value_or("baselines"), run, source, "peers");
}

int record(const Args& args, Io& io) {
  if (args.positionals().size() != 1)
    throw UsageError("peers record takes one results file, got " + std::to_string(args.positionals().size()));
  const std::string source = args.positionals().front();
  const RunResults stored = stored_peers_of(read_results_file(source), source);
  const std::string path = stored_file(args, stored, source);
  make_baseline_folder(path);
  write_results_file(path, to_json(stored));
  io.out << "wrote " << terminal_text(path) << ": " << stored.benchmarks.size() << " peer benchmarks of "
         << terminal_text(stored.context.gpu_name) << "\n";
  for (const auto& [name, value] : peer_environment(stored.context))
    io.out << "  " << terminal_text(name) << ": " << terminal_text(value) << "\n";
  return kExitOk;
}

// The libraries here, as the peers' suite names them: a JSON object of strings under "peers.".
PeerEnvironment read_versions(const std::string& path) {
  const nlohmann::json doc = read_json_file(path);
  if (!doc.is_object()) throw ResultsError(path + ": $: expected an object of \"peers.<library>\": \"version\", got " + json_excerpt(doc));
  PeerEnvironment versions;
  for (const auto& [key, value] : doc.items()) {
    const std::string at = path + ": $[" + json_excerpt(nlohmann::json(key)) + "]: ";
    if (!key.starts_with("peers.")) throw ResultsError(at + "a library's entry is named \"peers.<library>\"");
    if (!value.is_string()) throw ResultsError(at + "expected a string, got " + json_excerpt(value));
    versions[key] = value.get<std::string>();
  }
  return versions;
}

int reuse(const Args& args, Io& io) {
  if (args.positionals().size() != 1)
    throw UsageError("peers reuse takes one results file, got " + std::to_string(args.positionals().size()));
  const auto versions_file = args.value("--versions");
  if (!versions_file) throw UsageError("peers reuse needs --versions FILE: the libraries here (torch_peers.py --versions)");
  const std::string source = args.positionals().front();
  RunResults run = read_results_file(source);
  const std::string path = stored_file(args, run, source);
  if (!fs::exists(path)) {
    io.err << "kgate peers reuse: not reused: no stored peers for " << terminal_text(run.context.gpu_name) << " (" << terminal_text(path)
           << " does not exist)\n";
    return kExitGate;
  }
  PeerEnvironment here = peer_environment(run.context);
  here.merge(read_versions(*versions_file));
  const RunResults stored = read_results_file(path);
  std::vector<std::string> why = environment_differences(peer_environment(stored.context), here);
  for (const std::string& shape : shapes_without_peers(stored, run)) why.push_back("no stored peer at " + shape);
  if (!why.empty()) {
    io.err << "kgate peers reuse: not reused: " << terminal_text(path) << " does not stand for this machine and suite:\n";
    for (const std::string& line : why) io.err << "  " << terminal_text(line) << "\n";
    return kExitGate;
  }
  add_stored_peers(run, stored, path);
  const std::string output = args.value("--output").value_or(source);
  write_results_file(output, to_json(run));
  io.out << "reused " << stored.benchmarks.size() << " peer benchmarks from " << terminal_text(path) << " (measured "
         << terminal_text(stored.context.date) << " on " << terminal_text(stored.context.host) << ") into " << terminal_text(output)
         << "\n";
  return kExitOk;
}

}  // namespace

int run_peers(const Arguments& arguments, Io& io) {
  const auto parsed =
      parse_action(arguments,
                   {{"record", {.with_value = {"--baseline-dir"}}},
                    {"reuse", {.with_value = {"--baseline-dir", "--versions", "--output"}, .aliases = {{"-o", "--output"}}}}},
                   kUsage, io.out);
  if (!parsed) return kExitOk;
  return parsed->action == "record" ? record(parsed->args, io) : reuse(parsed->args, io);
}

}  // namespace kgate::cli
