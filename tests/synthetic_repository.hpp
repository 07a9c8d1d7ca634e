#pragma once
// A synthetic kernel repository laid out like one outside kgate, for the tests of the commands
// that build revisions (kgate bisect, kgate pr-gate) without a GPU or a compiler: no scripts/, no
// bench/, and a build script of its own (build.sh, standing in for the repository's cmake) that
// makes out/mykernels_bench. That binary copies canned results, synthetic-fast.json or
// synthetic-slow.json (12% slower), as the commit's file `speed` said when it was built.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "kgate/results/results_io.hpp"
#include "synthetic_results.hpp"

namespace kgate::synthetic {

class KernelRepository {
 public:
  static constexpr const char* kBenchmark = "scale_add/vectorized/n:1048576/f32";
  static constexpr const char* kBuildCommand = "./build.sh";
  static constexpr const char* kBench = "out/mykernels_bench";

  // One commit per entry of `speeds` ("fast" or "slow"), in order; every build is logged to
  // builds.log in `dir`.
  KernelRepository(const TempDir& dir, const std::vector<std::string>& speeds) : root_(dir.file("repo")) {
    const std::string canned = dir.file("canned");
    std::filesystem::create_directories(root_);
    std::filesystem::create_directories(canned);
    write_results_file(canned + "/synthetic-fast.json", to_json(run({benchmark(kBenchmark, {.median_s = 10e-6})})));
    write_results_file(canned + "/synthetic-slow.json", to_json(run({benchmark(kBenchmark, {.median_s = 11.2e-6})})));
    dir.write("repo/build.sh",
              "#!/bin/sh\n"
              "# Stand-in for the repository's build: a benchmark binary copying canned results.\n"
              "set -eu\n"
              "speed=$(cat speed)\n"
              "mkdir -p out\n"
              "cat > out/mykernels_bench <<EOF\n"
              "#!/bin/sh\n"
              "for a in \"\\$@\"; do case \\$a in\n"
              "  --benchmark_list_tests*) echo '" +
                  std::string(kBenchmark) +
                  "'; exit 0 ;;\n"
                  "  --kgate_out=*) cp '" +
                  canned +
                  "/synthetic-'$speed'.json' \"\\${a#--kgate_out=}\" ;;\n"
                  "esac; done\n"
                  "EOF\n"
                  "chmod +x out/mykernels_bench\n"
                  "echo \"built $speed in $PWD\" >> '" +
                  dir.file("builds.log") + "'\n");
    dir.write("repo/.gitignore", "out/\n");
    shell("chmod +x '" + root_ + "/build.sh' && " + git() + "init -q");
    for (const std::string& speed : speeds)
      shell("echo " + speed + " > '" + root_ + "/speed' && " + git() + "add -A && " + git() + "commit -q --allow-empty -m " + speed);
  }

  const std::string& root() const { return root_; }

  // The full commit id of `revision`.
  std::string commit(const std::string& revision) const {
    const std::string file = root_ + "/.git/kgate-test-commit";
    shell(git() + "rev-parse " + revision + " > '" + file + "'");
    std::string id = read_text(file);
    while (!id.empty() && id.back() == '\n') id.pop_back();
    return id;
  }

  // `git -C ROOT` with an identity, for the commits.
  std::string git() const { return "git -C '" + root_ + "' -c user.name=kgate -c user.email=kgate@example.com "; }

  static void shell(const std::string& command) {
    if (std::system(command.c_str()) != 0) ADD_FAILURE() << "failed: " << command;
  }

 private:
  std::string root_;
};

}  // namespace kgate::synthetic
