// kgate job-time: the wall time of the job that made a run, by phase, recorded in the run
// (context.kgate.job_s) so that its report and the history show what the job itself cost.
#include <charconv>
#include <cmath>

#include "args.hpp"
#include "commands.hpp"
#include "kgate/report/format.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate::cli {
namespace {

constexpr const char* kUsage = R"(usage: kgate job-time RUN.json PHASE=SECONDS...

Records the wall time of the job that made RUN by phase (its build, tests, benchmarks, ...) in the
run (context.kgate.job_s), and prints the job's time: so that the run's report says what the job
cost and, run after run, the history keeps it (kgate history jobs). A phase already recorded takes
the new time; a new phase comes after the others, so phases are shown in the order the job ran
them. scripts/run.sh records its build, correctness, suite, peers and compare_and_report phases so.

  PHASE    1 to 64 letters, digits, '_', '-' or '.'
  SECONDS  a number >= 0 (bash's $SECONDS between two steps, for one)

options:
  -h, --help  this text

exit status: 0 recorded, 2 bad input or usage
)";

JobPhase parse_phase(const std::string& argument) {
  const std::size_t equals = argument.find('=');
  if (equals == std::string::npos) throw UsageError("expected PHASE=SECONDS, got '" + argument + "'");
  JobPhase phase{argument.substr(0, equals), 0};
  if (!is_job_phase_name(phase.phase)) throw UsageError("'" + argument + "': a phase's name is " + kJobPhaseNameRule);
  const std::string text = argument.substr(equals + 1);
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), phase.seconds);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || !(phase.seconds >= 0) || !std::isfinite(phase.seconds))
    throw UsageError("'" + argument + "': expected the phase's seconds, a number >= 0");
  return phase;
}

}  // namespace

int run_job_time(const Arguments& arguments, Io& io) {
  const auto parsed = parse_or_help(arguments, {}, kUsage, io.out);
  if (!parsed) return kExitOk;
  const std::vector<std::string>& positionals = parsed->positionals();
  if (positionals.size() < 2) throw UsageError("give the run and at least one PHASE=SECONDS");
  std::vector<JobPhase> phases;
  for (std::size_t i = 1; i < positionals.size(); ++i) record_job_phases(phases, {parse_phase(positionals[i])});
  const std::string& path = positionals.front();
  RunResults run = read_results_file(path);
  record_job_phases(run.context.job_s, phases);
  write_results_file(path, to_json(run));
  io.out << "kgate: the job's wall time: " << report::format_job_phases(run.context.job_s) << "\n";
  return kExitOk;
}

}  // namespace kgate::cli
