// What keys a run in the history (history.hpp): its GPU, commit, date and suite, from the file or
// as given where the file records none.
#include "kgate/history/history.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate {

void complete_identity(RunResults& run, const std::string& path, const RunIdentity& given) {
  RunContext& c = run.context;
  if (given.gpu && !c.gpu_name.empty() && gpu_slug(c.gpu_name) != gpu_slug(*given.gpu))
    throw ResultsError(path + ": ran on " + c.gpu_name + ", not the --gpu given (" + *given.gpu + ")");
  if (c.gpu_name.empty()) c.gpu_name = given.gpu.value_or("");
  if (c.gpu_name.empty())
    throw ResultsError(path + ": does not say which GPU it ran on (plain Google Benchmark JSON does not): give --gpu NAME");

  const bool has_commit = !c.git_commit.empty() && c.git_commit != "unknown";
  if (given.commit && has_commit && !c.git_commit.starts_with(*given.commit) && !given.commit->starts_with(c.git_commit))
    throw ResultsError(path + ": records commit " + c.git_commit + ", not the --commit given (" + *given.commit + ")");
  if (!has_commit) c.git_commit = given.commit.value_or("");
  if (c.git_commit.empty())
    throw ResultsError(path +
                       ": records no commit (nvbench and plain Google Benchmark JSON do not, nor a kgate run built "
                       "outside git): give --commit SHA");

  if (given.date && !c.date.empty() && iso8601_utc(c.date) != given.date)
    throw ResultsError(path + ": records the date " + c.date + ", not the --date given (" + *given.date + ")");
  if (c.date.empty()) c.date = given.date.value_or("");
  if (c.date.empty())
    throw ResultsError(path + ": records no date to order the run by (nvbench JSON does not): give --date, e.g. --date " +
                       utc_now_iso8601());
  c.suite = given.suite.value_or(c.suite);
}

}  // namespace kgate
