#pragma once
// The next timing process, started ahead of its turn (timing_process.hpp says why a run has
// several). It does what needs no results while this one is still timing: the executable's start,
// the CUDA driver's initialization and its context, 1.2-1.9 s of each process's start on a 4x H200
// host, where the driver serves them one at a time across the GPUs (docs/ci.md). Then it waits.
//
// This process, when its timing ends, hands over: it writes the results so far into the file the
// next one was told of (--kgate_resume), releases its device (so that the next one plans its input
// copies on a device this one no longer holds), tells the next one to go through a pipe
// (--kgate_handover_fd) and waits for it, so that whoever started the run waits for the whole of it
// and gets its exit status. Left without a hand-over (this process restarted after a fault, or
// died), the next one reads the pipe's end and exits without measuring.
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "kgate/results/results.hpp"

namespace kgate {

class NextProcess {
 public:
  // Starts `executable` with `args` (args[0] its name) as continued by continuation_args, plus
  // --kgate_handover_fd. The started process is sent SIGTERM if this one dies first. Throws
  // std::runtime_error when the handover file, the pipe or the process cannot be made.
  static NextProcess start(const std::string& executable, const std::vector<std::string>& args);

  NextProcess(NextProcess&& other) noexcept;
  NextProcess& operator=(NextProcess&&) = delete;
  NextProcess(const NextProcess&) = delete;
  // Without a hand-over: closes the pipe, so the next process ends, and waits for it.
  ~NextProcess();

  // Writes `results` to the handover file, calls `release_device`, tells the next process to go
  // and waits for it: returns its exit status (128 + the signal that ended it). Once.
  int hand_over(const RunResults& results, const std::function<void()>& release_device);

  pid_t pid() const { return pid_; }

 private:
  NextProcess(pid_t pid, int go_fd, std::string handover_path);
  pid_t pid_ = -1;
  int go_fd_ = -1;  // the pipe's write end
  std::string handover_path_;
};

// In the next process: calls `prepare` (its context, made while the process before still times),
// then blocks until the process before hands over (true), or ends without doing so (false).
// Closes `fd`.
bool await_handover(int fd, const std::function<void()>& prepare);

// Waits for `pid` to end: its exit status, or 128 + the signal that ended it.
int exit_status_of(pid_t pid);

}  // namespace kgate
