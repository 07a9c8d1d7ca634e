// Bounded work on any input (kgate/results/json_file.hpp, docs/reliability.md): a gzip bomb, a
// device file, a deeply nested value, nvbench sample files outside their folder, a benchmark that
// hangs. The hostile files are synthetic, made here; the bomb and /dev/zero run the real kgate
// binary in a child limited to 1 GB of address space, where reading them whole would fail.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "kgate/results/json_file.hpp"
#include "kgate/results/results_io.hpp"
#include "tests/cli_runner.hpp"
#include "tests/synthetic_results.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
namespace syn = kgate::synthetic;
using kgate::cli_test::kgate_cli;
using nlohmann::json;

// An address-space limit is meaningless under AddressSanitizer, which reserves terabytes of it.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSpaceLimitWorks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSpaceLimitWorks = false;
#else
constexpr bool kAddressSpaceLimitWorks = true;
#endif
#else
constexpr bool kAddressSpaceLimitWorks = true;
#endif

constexpr rlim_t kOneGigabyte = rlim_t{1} << 30;

struct ChildOutcome {
  int status;  // exit status, or -1 when killed by a signal
  int signal;  // the signal that ended it, or 0
  std::string err;
};

// Runs the real kgate binary with `args`, its address space limited to 1 GB and `environment`
// (NAME=VALUE) added to this process's.
ChildOutcome run_kgate_limited(const syn::TempDir& dir, const std::vector<std::string>& args,
                               const std::vector<std::string>& environment = {}) {
  std::vector<std::string> argv_text = {KGATE_CLI_PATH};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<std::string> env_text(environment);
  for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
  std::vector<char*> argv, envp;
  for (std::string& a : argv_text) argv.push_back(a.data());
  for (std::string& e : env_text) envp.push_back(e.data());
  argv.push_back(nullptr);
  envp.push_back(nullptr);
  const std::string err_path = dir.file("child.err");
  const pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    if (kAddressSpaceLimitWorks) {
      const rlimit limit{kOneGigabyte, kOneGigabyte};
      setrlimit(RLIMIT_AS, &limit);
    }
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, WIFSIGNALED(status) ? WTERMSIG(status) : 0, syn::read_text(err_path)};
}

// A small real run to spoil: one benchmark of the recorded H100 run, so the hostile part is the only problem.
std::string small_real_run(const syn::TempDir& dir) {
  json doc = kgate::read_json_file(KGATE_TEST_DATA_DIR "/recorded-h100-run-a.json.gz");
  doc["benchmarks"] = json::array({doc["benchmarks"][0]});
  return dir.write("synthetic-small-run.json", doc.dump());
}

// A gzip file that inflates to `gigabytes` of zeros: gzip members of 16 MiB each, one after another
// (gzip readers inflate concatenated members as one stream), so it is made in a blink.
std::string gzip_bomb(const syn::TempDir& dir, double gigabytes) {
  const std::vector<unsigned char> zeros(std::size_t{16} << 20, 0);
  std::vector<unsigned char> member(compressBound(zeros.size()) + 64);
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY), Z_OK);  // +16: gzip
  stream.next_in = const_cast<unsigned char*>(zeros.data());
  stream.avail_in = static_cast<uInt>(zeros.size());
  stream.next_out = member.data();
  stream.avail_out = static_cast<uInt>(member.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  member.resize(stream.total_out);
  deflateEnd(&stream);
  const std::string path = dir.file("synthetic-bomb.json.gz");
  std::ofstream out(path, std::ios::binary);
  for (double inflated = 0; inflated < gigabytes * (1 << 30); inflated += static_cast<double>(zeros.size()))
    out.write(reinterpret_cast<const char*>(member.data()), static_cast<std::streamsize>(member.size()));
  return path;
}

// An environment variable set for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

TEST(InputLimits, GzipBombAndDeviceStopAtTheByteLimitWithinOneGigabyte) {
  const syn::TempDir dir;
  const std::string run = small_real_run(dir);
  const std::string bomb = gzip_bomb(dir, 1.5);
  EXPECT_LT(fs::file_size(bomb), std::uintmax_t{8} << 20);
  for (const std::string& hostile : {bomb, std::string("/dev/zero")}) {
    const auto started = std::chrono::steady_clock::now();
    const ChildOutcome r = run_kgate_limited(dir, {"compare", run, hostile});
    EXPECT_EQ(r.status, 2) << "signal " << r.signal << ": " << r.err;
    EXPECT_NE(r.err.find(hostile + (hostile == bomb ? ": inflates to more than 268435456 bytes" : ": larger than 268435456 bytes")),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("KGATE_MAX_INPUT_BYTES raises it"), std::string::npos) << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(30));
  }
  // Lowered below the bomb's first member, the limit stops it at once.
  const ChildOutcome lowered =
      run_kgate_limited(dir, {"baseline", "update", bomb, "--baseline-dir", dir.file("baselines")}, {"KGATE_MAX_INPUT_BYTES=1000000"});
  EXPECT_EQ(lowered.status, 2) << lowered.err;
  EXPECT_NE(lowered.err.find("inflates to more than 1000000 bytes"), std::string::npos) << lowered.err;
  EXPECT_FALSE(fs::exists(dir.file("baselines")));
}

TEST(InputLimits, ByteLimitFitsTheLargestRecordedRunAndCanBeLoweredOrRaised) {
  const std::string largest = KGATE_TEST_DATA_DIR "/recorded-h200-run-b.json.gz";  // 14.5 MB once inflated
  EXPECT_NO_THROW((void)kgate::read_json_file(largest));
  {
    const ScopedEnv lowered("KGATE_MAX_INPUT_BYTES", "10000000");
    EXPECT_THROW((void)kgate::read_json_file(largest), kgate::ResultsError);
  }
  {
    const ScopedEnv raised("KGATE_MAX_INPUT_BYTES", "20000000");
    EXPECT_NO_THROW((void)kgate::read_json_file(largest));
  }
  for (const char* bad : {"lots", "0", "-5", "12k", "99999999999999999999999"}) {
    const ScopedEnv wrong("KGATE_MAX_INPUT_BYTES", bad);
    try {
      (void)kgate::read_json_file(largest);
      ADD_FAILURE() << bad << ": accepted";
    } catch (const kgate::ResultsError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("KGATE_MAX_INPUT_BYTES: expected a whole number from 1 to ", 0), 0u) << e.what();
    }
  }
}

TEST(InputLimits, NestingDepthIsExactAndCanBeRaised) {
  const syn::TempDir dir;
  const auto limit = static_cast<std::size_t>(kgate::kDefaultInputLimits.max_depth);
  const std::string at_limit = dir.write("synthetic-64-deep.json", nested_arrays(limit));
  const std::string beyond = dir.write("synthetic-65-deep.json", nested_arrays(limit + 1));
  EXPECT_NO_THROW((void)kgate::read_json_file(at_limit));
  try {
    (void)kgate::read_json_file(beyond);
    ADD_FAILURE() << "65 levels accepted";
  } catch (const kgate::ResultsError& e) {
    EXPECT_EQ(std::string(e.what()),
              beyond + ": arrays and objects nested more than 64 deep, beyond the limit (KGATE_MAX_JSON_DEPTH raises it)");
  }
  const ScopedEnv raised("KGATE_MAX_JSON_DEPTH", "65");
  EXPECT_NO_THROW((void)kgate::read_json_file(beyond));
}

// 100000 levels in a field of the wrong type once overflowed the stack (exit 139) while the error
// message printed the value; now the reader refuses it, in every command that reads results.
TEST(InputLimits, DeeplyNestedValueExitsTwoInEveryCommand) {
  const syn::TempDir dir;
  const std::string run = small_real_run(dir);
  std::string text = syn::read_text(run);
  const std::string suite = "\"suite\":\"kgate\"";  // in the context: a string, given 100000 arrays in arrays
  text.replace(text.find(suite), suite.size(), "\"suite\":" + nested_arrays(100000));
  const std::string deep = dir.write("synthetic-deep.json", text);
  const std::vector<std::vector<std::string>> commands = {{"compare", run, deep},
                                                          {"report", deep, "--out", dir.file("report")},
                                                          {"merge", run, deep, "-o", dir.file("merged.json")},
                                                          {"baseline", "update", deep, "--baseline-dir", dir.file("baselines")},
                                                          {"history", "add", "--db", dir.file("history.sqlite"), deep}};
  for (const auto& command : commands) {
    const ChildOutcome r = run_kgate_limited(dir, command);
    EXPECT_EQ(r.status, 2) << command[0] << ": signal " << r.signal << ": " << r.err;
    EXPECT_NE(r.err.find(deep + ": arrays and objects nested more than 64 deep"), std::string::npos) << command[0] << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.file("baselines")));
  EXPECT_FALSE(fs::exists(dir.file("merged.json")));
}

// The recorded nvbench run (tests/data, unpacked in `folder`) with its first state's sample file named `name`.
std::string nvbench_with_sample_file(const fs::path& folder, const std::string& name, const std::string& label) {
  json doc = kgate::read_json_file((folder / "recorded-nvbench-run-a.json").string());
  for (json& summary : doc["benchmarks"][0]["states"][0]["summaries"])
    if (summary["tag"] == "nv/json/bin:nv/cold/sample_times")
      for (json& value : summary["data"])
        if (value["name"] == "filename") value["value"] = name;
  const std::string path = (folder / ("synthetic-nvbench-" + label + ".json")).string();
  std::ofstream(path) << doc.dump();
  return path;
}

TEST(InputLimits, NvbenchSampleFilesStayInTheirFolderAndAreCheckedBeforeReading) {
  const syn::TempDir dir;
  const fs::path run = dir.path() / "run", outside = dir.path() / "outside";
  fs::create_directories(run);
  ASSERT_EQ(std::system(("tar -xzf '" KGATE_TEST_DATA_DIR "/recorded-nvbench.tar.gz' -C '" + run.string() + "'").c_str()), 0);
  // A file nvbench could have written for this state (the right size), but outside the run's folder.
  fs::create_directories(outside);
  fs::copy_file(run / "recorded-nvbench-run-a.json-bin/0.bin", outside / "0.bin");
  fs::create_directories(run / "inside");
  fs::create_symlink("/dev/zero", run / "inside/zero.bin");
  fs::create_symlink(outside / "0.bin", run / "inside/elsewhere.bin");
  ASSERT_EQ(mkfifo((run / "inside/fifo.bin").c_str(), 0644), 0);
  const std::string other = (run / "recorded-nvbench-run-b.json").string();
  const std::string state = "$.benchmarks[0].states[0].summaries[27]: ";
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"absolute", "/dev/zero", "the sample file \"/dev/zero\" is not in the JSON file's folder: an absolute path"},
      {"up-and-out", "../outside/0.bin", "the sample file \"../outside/0.bin\" is outside the JSON file's folder"},
      {"missing", "../outside/1.bin", "cannot open the sample file \"../outside/1.bin\" beside the JSON file"},
      {"link-to-device", "inside/zero.bin",
       "the sample file \"inside/zero.bin\" is outside the JSON file's folder once links are followed"},
      {"link-out", "inside/elsewhere.bin", "the sample file \"inside/elsewhere.bin\" is outside the JSON file's folder"},
      {"fifo", "inside/fifo.bin", "the sample file \"inside/fifo.bin\" is not a regular file"},
      {"directory", "inside", "the sample file \"inside\" is not a regular file"},
      {"wrong size", "recorded-nvbench-run-a.json-bin/2.bin",
       "the sample file \"recorded-nvbench-run-a.json-bin/2.bin\" holds 6700 bytes, expected 52784 float32 values"}};
  for (const auto& [label, name, expected] : cases) {
    const std::string path = nvbench_with_sample_file(run, name, label);
    const ChildOutcome r = run_kgate_limited(dir, {"compare", other, path});
    EXPECT_EQ(r.status, 2) << label << ": signal " << r.signal << ": " << r.err;
    EXPECT_NE(r.err.find(path + ": " + state + expected), std::string::npos) << label << ": " << r.err;
  }
  // Where nvbench put them, they are read.
  EXPECT_EQ(kgate_cli({"compare", other, (run / "recorded-nvbench-run-a.json").string()}).status, 0);
}

// A stand-in benchmark binary that lists one benchmark and then hangs in a child of its own, as a
// benchmark stuck on a GPU would; it writes the child's pid to `pid_file`.
std::string hanging_bench(const syn::TempDir& dir) {
  const std::string path = dir.write("synthetic-hanging-bench",
                                     "#!/bin/sh\n"
                                     "for arg in \"$@\"; do\n"
                                     "  case $arg in --benchmark_list_tests*) echo rmsnorm/vectorized/m:1/n:4096/bf16; exit 0 ;; esac\n"
                                     "done\n"
                                     "sleep 600 &\n"
                                     "echo $! > '" +
                                         dir.file("sleeper.pid") +
                                         "'\n"
                                         "wait\n");
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

// Whether `pid` is gone (or a zombie left for init to reap: it runs no more).
bool ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  return text.empty() || text.find(") Z ") != std::string::npos;
}

TEST(InputLimits, HangingBenchmarkIsKilledAtTheProcessTimeout) {
  const syn::TempDir dir;
  const std::string bench = hanging_bench(dir);
  const auto started = std::chrono::steady_clock::now();
  const auto r = kgate_cli({"ab", "--base", bench, "--head", bench, "--rounds", "1", "--process-timeout", "1"});
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(bench + ": round 1 ran past --process-timeout (" + bench +
                       ": still running at its time limit of 1 s: killed, with its process group)"),
            std::string::npos)
      << r.err;
  // The benchmark's own child went with it.
  const pid_t sleeper = std::stoi(syn::read_text(dir.file("sleeper.pid")));
  for (int i = 0; i < 50 && !ended(sleeper); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(ended(sleeper)) << "pid " << sleeper;
  if (!ended(sleeper)) kill(sleeper, SIGKILL);

  const auto usage = kgate_cli({"ab", "--base", bench, "--head", bench, "--process-timeout", "0"});
  EXPECT_EQ(usage.status, 2);
  EXPECT_NE(usage.err.find("--process-timeout"), std::string::npos) << usage.err;
}

}  // namespace
