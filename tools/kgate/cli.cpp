#include "cli.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "args.hpp"
#include "commands.hpp"
#include "kgate_build_commit.hpp"
#include "kgate/base/escape.hpp"
#include "kgate/gate/compare.hpp"
#include "kgate/results/results.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate {
namespace {

constexpr const char* kUsage = R"(usage: kgate <command> [options]

The regression gate of CUDA kernel benchmarks: compares runs and keeps baselines, measures two
builds against each other, reports, keeps a history and bisects, in any repository whose suite
writes kgate, Google Benchmark or nvbench JSON.

commands:
  compare BASELINE.json NEW.json      compare two runs benchmark by benchmark
  compare --baseline-dir DIR NEW.json compare against the checked-in baseline of NEW's GPU and suite
  baseline update NEW.json            record NEW's results as the baseline of its GPU and suite
  baseline show [GPU-SLUG]            list the checked-in baselines
  peers record|reuse RUN.json         keep the peers' figures of this GPU and its libraries, and
                                      take them into a run instead of measuring them again
  ab --base BENCH --head BENCH        measure two builds on this GPU in alternating rounds and compare
  merge A.json B.json ... -o OUT.json merge the shards of one suite's run
  job-time RUN.json PHASE=SECONDS...  record the wall time of the job that made RUN, by phase
  report NEW.json --out DIR           write a report (Markdown, HTML, SVG charts) of a run
  story WORKLOAD --out DIR            measure a transformer layer's step and tell it: timeline,
                                      breakdown, roofline, top kernels, scaling
  history add|show|changes|jobs       the nightly runs in SQLite, their series and change points,
                                      and the wall time of the jobs that made them
  bisect --good C --bad C --filter RE build (--build-cmd) and A/B the commits between to find the
                                      one that slowed RE down

CI commands (each step of a pull-request gate or a nightly job, in any git repository):
  pr-gate --base REV --head REV       build base and head (--build-cmd, --bench), kgate ab them on
                                      this GPU and write the verdicts and a report
  shard-run --bench FILE              run a suite split over this machine's GPUs, merged
  nightly SHARD_DIR                   merge a night's shards, compare them with the baseline,
                                      report, and add the run to the history (--history)

Run 'kgate <command> --help' for the options of a command; 'kgate --version' prints the version.

environment (every command that reads JSON: runs, baselines, thresholds; kgate's
docs/reliability.md):
  KGATE_MAX_INPUT_BYTES N  the most bytes one input file may hold once inflated (default
                           268435456, 256 MiB: 18 times the largest recorded run); a larger
                           file, or nvbench sample file, is refused with exit 2
  KGATE_MAX_JSON_DEPTH N   the most arrays and objects nested in one another (default 64,
                           at most 1000); deeper is refused with exit 2

exit status: 0 no regression / success, 1 regression or failed variant (compare, ab, pr-gate,
nightly), a refused baseline update, a new slowdown change point (history changes, nightly), a
failed benchmark (shard-run) or no clean first bad commit (bisect), 2 bad input or usage.
)";

// An error message names files and values from the input: its control characters are shown as
// escapes (a name's ESC or BEL never reaches the terminal), its lines kept.
std::string shown(std::string_view text) { return terminal_text(text, "\n"); }

bool colour_wanted(const std::ostream& out) {
  const char* no_colour = std::getenv("NO_COLOR");
  return &out == &std::cout && isatty(STDOUT_FILENO) && !(no_colour && *no_colour);
}

}  // namespace

int kgate_main(int argc, char** argv, std::ostream& out, std::ostream& err) {
  const cli::Arguments all(argv + 1, argv + argc);
  const std::string command = all.empty() ? "" : all.front();
  const cli::Arguments rest(all.empty() ? all.end() : all.begin() + 1, all.end());
  cli::Io io{out, err, colour_wanted(out)};
  try {
    if (command == "-h" || command == "--help" || command == "help") {
      out << kUsage;
      return cli::kExitOk;
    }
    if (command == "--version" || command == "-V") {
      out << "kgate " KGATE_VERSION " (commit " KGATE_BUILD_COMMIT ", results schema version " << kResultsSchemaVersion << ")\n";
      return cli::kExitOk;
    }
    if (command == "compare") return cli::run_compare(rest, io);
    if (command == "baseline") return cli::run_baseline(rest, io);
    if (command == "merge") return cli::run_merge(rest, io);
    if (command == "job-time") return cli::run_job_time(rest, io);
    if (command == "peers") return cli::run_peers(rest, io);
    if (command == "ab") return cli::run_ab(rest, io);
    if (command == "report") return cli::run_report(rest, io);
    if (command == "story") return cli::run_story(rest, io);
    if (command == "history") return cli::run_history(rest, io);
    if (command == "bisect") return cli::run_bisect(rest, io);
    if (command == "pr-gate") return cli::run_pr_gate(rest, io);
    if (command == "shard-run") return cli::run_shard_run(rest, io);
    if (command == "nightly") return cli::run_nightly(rest, io);
    err << "kgate: " << (command.empty() ? "no command given" : "unknown command '" + terminal_text(command) + "'") << "\n\n" << kUsage;
    return cli::kExitUsage;
  } catch (const cli::UsageError& e) {
    err << "kgate " << command << ": " << shown(e.what()) << " (see 'kgate " << command << " --help')\n";
  } catch (const ResultsError& e) {
    err << "kgate " << command << ": " << shown(e.what()) << "\n";
  } catch (const EnvironmentMismatch& e) {
    err << "kgate " << command << ": " << shown(e.what()) << "\n";
  } catch (const TimerMismatch& e) {
    err << "kgate " << command << ": " << shown(e.what()) << "\n";
  } catch (const std::filesystem::filesystem_error& e) {
    err << "kgate " << command << ": " << shown(e.what()) << "\n";  // names the path and the system's reason
  } catch (const std::exception& e) {
    // Not expected: every input problem above has its own message. Still exit 2, never 0.
    err << "kgate " << command << ": internal error: " << shown(e.what()) << "\n";
  } catch (...) {
    err << "kgate " << command << ": internal error\n";
  }
  return cli::kExitUsage;
}

}  // namespace kgate
