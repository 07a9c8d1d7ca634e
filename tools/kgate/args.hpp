#pragma once
// A small command-line parser for kgate's subcommands: long options with a value ("--opt VALUE"
// or "--opt=VALUE"), boolean flags, short aliases, "--" to end options, and positional arguments.
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace kgate::cli {

// A mistake in how kgate was called; the message is one line, without the program name.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::set<std::string> with_value{};            // e.g. "--json"
  std::set<std::string> flags{};                 // e.g. "--force"
  std::map<std::string, std::string> aliases{};  // e.g. "-o" -> "--output"
};

class Args {
 public:
  // Throws UsageError on an unknown option or a missing value. "-h" and "--help" are always flags.
  Args(const std::vector<std::string>& arguments, const OptionSpec& spec);

  bool help() const { return flags_.contains("--help"); }
  bool flag(const std::string& name) const { return flags_.contains(name); }
  std::optional<std::string> value(const std::string& name) const;
  const std::vector<std::string>& positionals() const { return positionals_; }
  // The arguments after "--", which a command passes on to the programs it runs (flags for a
  // benchmark binary); throws UsageError when any other positional argument was given, saying
  // that `what` go after "--".
  std::vector<std::string> after_separator(const std::string& what) const;

  // The option's value as a number in [low, high]; `fallback` when it was not given.
  double number(const std::string& name, double fallback, double low, double high) const;

 private:
  std::set<std::string> flags_;
  std::map<std::string, std::string> values_;  // the last one wins when an option is repeated
  std::vector<std::string> positionals_;       // including those after "--"
  std::size_t separated_ = 0;                  // how many of them came after "--"
};

// Every command's start: its arguments parsed by `spec`, or, when they ask for help (-h, --help),
// `usage` printed to `out` and std::nullopt returned, for the command to return kExitOk:
//   const auto parsed = parse_or_help(arguments, spec, kUsage, io.out);
//   if (!parsed) return kExitOk;
//   const Args& args = *parsed;
// Throws UsageError as Args does, help or not: an unknown option is never taken for a request for help.
std::optional<Args> parse_or_help(const std::vector<std::string>& arguments, const OptionSpec& spec, std::string_view usage,
                                  std::ostream& out);

// A command of several actions (kgate baseline update|show, kgate peers record|reuse): the first
// argument names the action, the rest are parsed by its spec in `actions`. Returns std::nullopt after
// printing `usage` when asked for help (before an action, or after one). Throws UsageError naming
// the actions, in their order, when the first argument is none of them.
struct ActionArgs {
  std::string action;
  Args args;
};
std::optional<ActionArgs> parse_action(const std::vector<std::string>& arguments,
                                       const std::vector<std::pair<std::string, OptionSpec>>& actions, std::string_view usage,
                                       std::ostream& out);

// What `call()` returns; a std::invalid_argument it throws (how the library refuses a request it
// cannot carry out: an unknown workload, two builds' lists that differ) becomes a UsageError with
// its message, exit status 2 with a pointer to the command's --help.
template <typename Call>
auto refusals_as_usage_errors(Call call) -> decltype(call()) {
  try {
    return call();
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

// The command line as a reader can paste it into a shell: "kgate story decode --out 'my dir'".
std::string command_line(std::string_view command, const std::vector<std::string>& arguments);

// Throws UsageError unless `path`, the value of `option`, can be written: an existing file that is
// writable, or a new name in an existing, writable directory. Commands check their output paths
// with it before any work, so a mistyped --json fails at once rather than after the comparison.
void require_writable(const std::string& option, const std::string& path);
// The same for an output directory, without creating it: an existing, writable directory, or one
// whose nearest existing ancestor is a writable directory (the command creates it later).
void require_writable_directory(const std::string& option, const std::string& path);
// Throws UsageError unless `url`, the value of `option`, is an absolute http(s) URL that a Markdown
// link and an HTML attribute can hold as it is (no space, control, quote, bracket or backslash).
void require_absolute_url(const std::string& option, const std::string& url);

}  // namespace kgate::cli
