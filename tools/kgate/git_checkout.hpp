#pragma once
// git in the user's checkout, for the commands that work with its history (bisect, pr-gate,
// nightly's history branch): each git command's standard output, or its error as an exception.
#include <filesystem>
#include <string>
#include <vector>

namespace kgate::cli {

class GitCheckout {
 public:
  // The checkout `directory` is in, at its top level. git's output goes through files in
  // `scratch` (created when missing). Throws UsageError when `directory` is in no git checkout.
  GitCheckout(const std::filesystem::path& directory, const std::filesystem::path& scratch);

  const std::filesystem::path& root() const { return root_; }

  // `git -C ROOT ARGS...`'s standard output without its trailing newlines. Throws ResultsError
  // with the end of its error output when it fails.
  std::string git(const std::vector<std::string>& args) const;
  // Its exit status only, for questions git answers that way (merge-base --is-ancestor).
  int git_status(const std::vector<std::string>& args) const;
  // The full commit id of `revision`; throws UsageError when it names no commit here.
  std::string commit(const std::string& revision) const;

 private:
  std::filesystem::path root_, scratch_;
};

}  // namespace kgate::cli
