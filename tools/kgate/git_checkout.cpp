#include "git_checkout.hpp"

#include "args.hpp"
#include "kgate/results/results_io.hpp"
#include "process.hpp"

namespace kgate::cli {

namespace fs = std::filesystem;

GitCheckout::GitCheckout(const fs::path& directory, const fs::path& scratch) : root_(fs::absolute(directory)), scratch_(scratch) {
  fs::create_directories(scratch_);
  try {
    root_ = git({"rev-parse", "--show-toplevel"});
  } catch (const ResultsError&) {
    throw UsageError(root_.string() + " is not in a git checkout");
  }
}

int GitCheckout::git_status(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"git", "-C", root_.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, (scratch_ / "git.out").string(), (scratch_ / "git.err").string());
}

std::string GitCheckout::git(const std::vector<std::string>& args) const {
  if (const int status = git_status(args); status != 0) {
    std::string command = "git";
    for (const std::string& a : args) command += " " + a;
    throw ResultsError(command + " in " + root_.string() + " failed (exit status " + std::to_string(status) +
                       "): " + last_lines((scratch_ / "git.err").string(), 3));
  }
  std::string text = read_text((scratch_ / "git.out").string());
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

std::string GitCheckout::commit(const std::string& revision) const {
  try {
    return git({"rev-parse", "--verify", "--quiet", revision + "^{commit}"});
  } catch (const ResultsError&) {
    throw UsageError("'" + revision + "' is not a commit of " + root_.string());
  }
}

}  // namespace kgate::cli
