#include "process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "kgate/results/results_io.hpp"

extern char** environ;

namespace kgate::cli {

namespace {

// This process's environment with `changes` (NAME=VALUE) added, each replacing an entry of its name.
std::vector<std::string> environment_with(const std::vector<std::string>& changes) {
  std::vector<std::string> entries;
  for (char** e = environ; *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(changes.begin(), changes.end(), [&](const std::string& c) { return c.starts_with(name); }))
      entries.push_back(entry);
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

}  // namespace

int run_process(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path,
                const ProcessSetup& setup) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (err_path == out_path) posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  else posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  // After the opens, so that the output paths are this process's relative paths, not the child's.
  if (!setup.directory.empty()) posix_spawn_file_actions_addchdir_np(&actions, setup.directory.c_str());
  const std::vector<std::string> environment = environment_with(setup.environment);
  std::vector<char*> args = c_strings(argv), envp = c_strings(environment);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, argv.front().c_str(), &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) throw ResultsError(argv.front() + ": cannot run it: " + std::strerror(spawned));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw ResultsError(argv.front() + ": lost track of the process: " + std::strerror(errno));
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
