// The next timing process started ahead of its turn (kgate/suite/next_process.hpp), played by a
// shell script that records what it saw: that it runs before the hand-over, what it was handed,
// whether the device was released by then, and that it ends when no hand-over comes.
#include "kgate/suite/next_process.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "kgate/results/results_io.hpp"
#include "synthetic_results.hpp"

namespace {

namespace syn = kgate::synthetic;
namespace fs = std::filesystem;

// The next process: $1 is --kgate_resume=FILE, $2 --kgate_handover_fd=N. Exit 7: handed over
// after the release; 8: handed over before it; 9: no hand-over came.
std::vector<std::string> next_process_script(const syn::TempDir& dir) {
  const std::string d = dir.path().string();
  return {"sh", "-c",
          "resume=${1#--kgate_resume=}; fd=${2#--kgate_handover_fd=}; touch '" + d + "/started'; " +
              "if [ \"$(eval \"head -c1 <&$fd\")\" = g ]; then cp \"$resume\" '" + d + "/handed.json'; " + "test -f '" + d +
              "/released' && exit 7; exit 8; fi; touch '" + d + "/abandoned'; exit 9",
          "sh"};
}

bool appears(const std::string& path) {
  for (int i = 0; i < 500 && !fs::exists(path); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return fs::exists(path);
}

TEST(NextProcess, RunsBeforeTheHandOverAndGetsTheResultsOnceTheDeviceIsReleased) {
  const syn::TempDir dir;
  kgate::NextProcess next = kgate::NextProcess::start("/bin/sh", next_process_script(dir));
  ASSERT_TRUE(appears(dir.file("started")));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(fs::exists(dir.file("handed.json")));  // still waiting

  const kgate::RunResults results = syn::run({syn::benchmark("rmsnorm/vectorized/m:1/n:4096/bf16", {})});
  EXPECT_EQ(next.hand_over(results, [&] { dir.write("released", ""); }), 7);
  const kgate::RunResults handed = kgate::read_results_file(dir.file("handed.json"));
  ASSERT_EQ(handed.benchmarks.size(), 1u);
  EXPECT_EQ(handed.benchmarks[0].name, "rmsnorm/vectorized/m:1/n:4096/bf16");
  EXPECT_THROW(next.hand_over(results, [] {}), std::logic_error);
}

TEST(NextProcess, EndsWithoutMeasuringWhenNoHandOverComes) {
  const syn::TempDir dir;
  {
    kgate::NextProcess next = kgate::NextProcess::start("/bin/sh", next_process_script(dir));
    ASSERT_TRUE(appears(dir.file("started")));
  }  // this process goes on without it (a restart after a fault)
  EXPECT_TRUE(fs::exists(dir.file("abandoned")));
  EXPECT_FALSE(fs::exists(dir.file("handed.json")));
}

TEST(NextProcess, ItsExitStatusIsTheRunsIncludingASignal) {
  const syn::TempDir dir;
  kgate::NextProcess next = kgate::NextProcess::start("/bin/sh", {"sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(next.hand_over(syn::run({}), [] {}), 128 + SIGTERM);
}

TEST(NextProcess, AwaitingTheHandOverTellsAGoFromAnEnd) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  ASSERT_EQ(write(fds[1], "g", 1), 1);
  int prepared = 0;
  EXPECT_TRUE(kgate::await_handover(fds[0], [&] { ++prepared; }));
  EXPECT_EQ(prepared, 1);
  close(fds[1]);
  ASSERT_EQ(pipe(fds), 0);
  close(fds[1]);
  EXPECT_FALSE(kgate::await_handover(fds[0], [&] { ++prepared; }));
  EXPECT_EQ(prepared, 2) << "prepared before waiting, whatever comes";
}

}  // namespace
