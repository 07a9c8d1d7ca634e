#pragma once
// The kgate command line run in-process, for the tests of its commands: `args` are what follows
// the program name; the outcome is the exit status and what each stream received.
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"

namespace kgate::cli_test {

struct Outcome {
  int status;
  std::string out, err;
};

inline Outcome kgate_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "kgate");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  const int status = kgate::kgate_main(static_cast<int>(args.size()), argv.data(), out, err);
  return {status, out.str(), err.str()};
}

}  // namespace kgate::cli_test
