#pragma once
// Child processes for the commands that run other programs (kgate ab runs benchmark binaries,
// kgate bisect runs git and the build script).
#include <cstddef>
#include <string>
#include <vector>

namespace kgate::cli {

// Runs `argv` (argv[0] looked up in PATH) with its standard output to `out_path` and its standard
// error to `err_path` (the same file when equal); returns its exit status (128 + signal when
// killed). Throws ResultsError when it cannot be started.
int run_process(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path);

std::string read_text(const std::string& path);  // the whole file; empty when unreadable
std::string last_lines(const std::string& path, std::size_t count);

}  // namespace kgate::cli
