#include "kgate/suite/next_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "kgate/suite/timing_process.hpp"

namespace kgate {
namespace {

std::runtime_error system_error(const std::string& what) { return std::runtime_error(what + ": " + std::strerror(errno)); }

}  // namespace

NextProcess NextProcess::start(const std::string& executable, const std::vector<std::string>& args) {
  std::string path = reserve_handover();
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    std::remove(path.c_str());
    throw system_error("cannot make the hand-over pipe");
  }
  const int read_fd = pipe_fds[0], go_fd = pipe_fds[1];
  std::vector<std::string> next_args = continuation_args(args, path);
  next_args.push_back("--kgate_handover_fd=" + std::to_string(read_fd));
  std::vector<char*> argv;
  for (std::string& a : next_args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec: this process has CUDA's threads.
    fcntl(read_fd, F_SETFD, 0);  // the read end stays open across exec; the write end closes
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the parent died before the signal was asked for
    execv(executable.c_str(), argv.data());
    _exit(127);
  }
  close(read_fd);
  if (pid < 0) {
    close(go_fd);
    std::remove(path.c_str());
    throw system_error("cannot start the next timing process");
  }
  return NextProcess(pid, go_fd, std::move(path));
}

NextProcess::NextProcess(pid_t pid, int go_fd, std::string handover_path)
    : pid_(pid), go_fd_(go_fd), handover_path_(std::move(handover_path)) {}

NextProcess::NextProcess(NextProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)), go_fd_(std::exchange(other.go_fd_, -1)), handover_path_(std::move(other.handover_path_)) {}

NextProcess::~NextProcess() {
  if (go_fd_ >= 0) close(go_fd_);
  if (pid_ > 0) exit_status_of(pid_);
}

int NextProcess::hand_over(const RunResults& results, const std::function<void()>& release_device) {
  if (go_fd_ < 0) throw std::logic_error("NextProcess::hand_over: already handed over");
  write_handover(results, handover_path_);
  release_device();
  // A next process that died already leaves the pipe without a reader: the write fails (EPIPE)
  // rather than ending this process, and its exit status says what happened.
  std::signal(SIGPIPE, SIG_IGN);
  const char go = 'g';
  ssize_t written;
  do written = write(go_fd_, &go, 1);
  while (written < 0 && errno == EINTR);
  close(std::exchange(go_fd_, -1));
  if (written != 1 && errno != EPIPE) throw system_error("cannot hand over to the next timing process");
  return exit_status_of(std::exchange(pid_, -1));
}

bool await_handover(int fd, const std::function<void()>& prepare) {
  prepare();
  char go = 0;
  ssize_t got;
  do got = read(fd, &go, 1);
  while (got < 0 && errno == EINTR);
  close(fd);
  return got == 1 && go == 'g';
}

int exit_status_of(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

}  // namespace kgate
