#include "process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

extern char** environ;

namespace kgate::cli {

namespace {

// This process's environment with `changes` (NAME=VALUE) added, each replacing an entry of its name.
std::vector<std::string> environment_with(const std::vector<std::string>& changes) {
  std::vector<std::string> entries;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(changes.begin(), changes.end(), [&](const std::string& c) { return c.starts_with(name); })) entries.push_back(entry);
  }
  entries.insert(entries.end(), changes.begin(), changes.end());
  return entries;
}

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (const std::string& s : strings) pointers.push_back(const_cast<char*>(s.c_str()));
  pointers.push_back(nullptr);
  return pointers;
}

// The process group kgate waits on, for pass_on_signal (a signal handler may touch no other state).
volatile std::sig_atomic_t waited_group = 0;

extern "C" void pass_on_signal(int signal) {
  if (waited_group > 0) ::kill(-static_cast<pid_t>(waited_group), signal);
  ::signal(signal, SIG_DFL);  // then end kgate as the signal would have
  ::raise(signal);
}

// While it lives, the signals that end kgate end the process group `group` too: a child in a group
// of its own no longer gets the terminal's Ctrl-C. A signal kgate ignores (nohup) stays ignored.
class SignalsPassedOn {
 public:
  explicit SignalsPassedOn(pid_t group) {
    waited_group = group;
    struct sigaction pass = {};
    pass.sa_handler = pass_on_signal;
    sigemptyset(&pass.sa_mask);
    for (std::size_t i = 0; i < std::size(kSignals); ++i) {
      sigaction(kSignals[i], nullptr, &previous_[i]);
      if (previous_[i].sa_handler != SIG_IGN) sigaction(kSignals[i], &pass, nullptr);
    }
  }
  ~SignalsPassedOn() {
    for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &previous_[i], nullptr);
    waited_group = 0;
  }
  SignalsPassedOn(const SignalsPassedOn&) = delete;
  SignalsPassedOn& operator=(const SignalsPassedOn&) = delete;

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction previous_[std::size(kSignals)];
};

// Waits for `pid`, the leader of its own process group, at most `limit`; at the limit the group
// is killed and ProcessTimeout thrown. Polled, with pauses growing to 0.1 s: a benchmark runs for
// seconds at least.
int wait_with_limit(pid_t pid, const std::string& program, std::chrono::duration<double> limit) {
  const SignalsPassedOn passed_on(pid);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(limit);
  int status = 0;
  for (std::chrono::milliseconds pause{1};; pause = std::min(pause * 2, std::chrono::milliseconds{100})) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) return status;
    if (done < 0 && errno != EINTR) throw ResultsError(program + ": lost track of the process: " + std::strerror(errno));
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(-pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      std::ostringstream seconds;
      seconds << limit.count();
      throw ProcessTimeout(program + ": still running at its time limit of " + seconds.str() + " s: killed, with its process group");
    }
    std::this_thread::sleep_for(pause);
  }
}

}  // namespace

int run_process(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path, const ProcessSetup& setup) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  constexpr int kCreated = O_WRONLY | O_CREAT | O_TRUNC;
  if (!out_path.empty()) posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), kCreated, 0644);
  if (!err_path.empty() && err_path == out_path) posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  else if (!err_path.empty()) posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), kCreated, 0644);
  // After the opens, so that the output paths are this process's relative paths, not the child's.
  if (!setup.directory.empty()) posix_spawn_file_actions_addchdir_np(&actions, setup.directory.c_str());
  const std::vector<std::string> environment = environment_with(setup.environment);
  std::vector<char*> args = c_strings(argv), envp = c_strings(environment);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  if (setup.time_limit) {  // a group of its own, so that the limit ends whatever the child started
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  }
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv.front().c_str(), &actions, &attributes, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (spawned != 0) throw ResultsError(argv.front() + ": cannot run it: " + std::strerror(spawned));
  int status = 0;
  if (setup.time_limit) {
    status = wait_with_limit(pid, argv.front(), *setup.time_limit);
  } else {
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) throw ResultsError(argv.front() + ": lost track of the process: " + std::strerror(errno));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string seconds_since(std::chrono::steady_clock::time_point start) {
  return std::to_string(std::lround(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count())) + " s";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_lines(const std::string& path, std::size_t count) {
  const std::string text = read_text(path);
  std::size_t start = text.size();
  for (std::size_t seen = 0; start > 0 && seen <= count;)
    if (text[--start] == '\n') ++seen;
  return text.substr(start == 0 ? 0 : start + 1);
}

}  // namespace kgate::cli
