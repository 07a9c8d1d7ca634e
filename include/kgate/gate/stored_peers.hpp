#pragma once
// The peers' figures kept beside a GPU's baselines, <baseline dir>/<GPU slug>/peers.json
// (docs/peers.md). A peer's speed depends on the GPU, its clocks, the driver and the libraries it
// calls, not on kgate's commit under test, so the peers are measured once per such environment and
// their figures reused while it holds (asv keeps results per machine and environment for the same
// reason). `kgate peers record` writes the file; `kgate peers reuse` takes it into a run.
#include <map>
#include <string>
#include <vector>

#include "kgate/results/results.hpp"

namespace kgate {

// What decides a peer's speed, name -> value: the GPU, its default SM and memory clocks and the
// driver (a run's context), and the libraries the peers call, as the peers' suite records them
// in context.kgate.extra ("peers.torch", "peers.cuda", "peers.cudnn", "peers.cublas",
// "peers.triton", "peers.liger_kernel"). An entry the context lacks is absent.
using PeerEnvironment = std::map<std::string, std::string>;
PeerEnvironment peer_environment(const RunContext& context);

// The value a library's entry has where it is not installed, as the peers' suite writes it.
inline constexpr const char* kNotInstalled = "not installed";

// Why figures recorded in `recorded` cannot stand for peers measured in `here`, one line per entry
// that differs: "peers.torch: 2.10.0 recorded, 2.11.0 here". A library recorded but not installed
// here is no difference: its recorded figures are the strongest peers a user of this GPU can be
// shown. An entry `here` lacks (a run of an older kgate) is one.
std::vector<std::string> environment_differences(const PeerEnvironment& recorded, const PeerEnvironment& here);

// The shapes `run` benchmarks in a family that `stored` has peers of, at which `stored` has none,
// as "<family> <shape>": a suite that gained shapes since the peers were recorded.
std::vector<std::string> shapes_without_peers(const RunResults& stored, const RunResults& run);

// The stored-peers file of `run` (read from `source`): every peer benchmark it has, failed and
// skipped ones too (that is what the environment gave), each with the run's provenance added to
// its own (commit, date, host, driver, clocks); the run's context without its ceilings (a reusing
// run places the peers on its own) and with only the "peers.*" entries of extra. Throws
// ResultsError naming `source` when the run has no peer benchmark.
RunResults stored_peers_of(const RunResults& run, const std::string& source);

// Adds the peers of `stored` (read from `stored_path`) to `run`, placed on the run's ceilings, each
// marked in its provenance "figures" = "reused from <stored_path>", and the stored "peers.*"
// entries to the run's extra, with "peers.figures" saying where from, when and on which host. Throws ResultsError when `run` already has a peer benchmark.
void add_stored_peers(RunResults& run, const RunResults& stored, const std::string& stored_path);

}  // namespace kgate
