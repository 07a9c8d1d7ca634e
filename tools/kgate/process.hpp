#pragma once
// Child processes for the commands that run other programs (kgate ab and shard-run run benchmark
// binaries, story runs kgate_bench; bisect, pr-gate and nightly run git and the user's build command).
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "kgate/results/results_io.hpp"

namespace kgate::cli {

// What a child gets beyond this process's own working directory and environment.
struct ProcessSetup {
  std::string directory;                 // its working directory; empty: this process's
  std::vector<std::string> environment;  // NAME=VALUE entries that add to or replace this process's
  // The longest it may run. With a limit the child leads a process group of its own, killed
  // whole at the limit (a benchmark script's own children too), and the signals that end kgate
  // (SIGINT, SIGTERM, SIGHUP) are passed on to that group while kgate waits.
  std::optional<std::chrono::duration<double>> time_limit = std::nullopt;
};

// A child that ran past its time limit; it and its process group were killed. what() names the
// program and the limit.
class ProcessTimeout : public ResultsError {
 public:
  using ResultsError::ResultsError;
};

// Runs `argv` (argv[0] looked up in PATH) with its standard output to `out_path` and its standard
// error to `err_path` (the same file when equal; both relative to this process's directory; an
// empty path: this process's own stream, for a program whose progress the user watches);
// returns its exit status (128 + signal when killed). Throws ResultsError when it cannot be started
// and ProcessTimeout when it runs past setup.time_limit.
int run_process(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path,
                const ProcessSetup& setup = {});

// "12 s": the whole seconds since `start`, for the progress lines of the commands that wait on others.
std::string seconds_since(std::chrono::steady_clock::time_point start);

std::string read_text(const std::string& path);  // the whole file; empty when unreadable
std::string last_lines(const std::string& path, std::size_t count);

}  // namespace kgate::cli
