#include "kgate/results/file_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "kgate/base/text.hpp"
#include "kgate/results/file_io.hpp"
#include "kgate/results/provenance.hpp"
#include "kgate/results/results_io.hpp"

namespace kgate {
namespace {

// Whether `path` still names the file open as `fd`: a holder removes the lock file before it
// releases the lock, so a process that opened the old file may get its lock after it is gone.
bool names_open_file(const std::string& path, int fd) {
  struct stat by_name {
  }, by_fd{};
  return ::stat(path.c_str(), &by_name) == 0 && ::fstat(fd, &by_fd) == 0 && by_name.st_dev == by_fd.st_dev &&
         by_name.st_ino == by_fd.st_ino;
}

// What the lock file says of its holder: one line, at most 512 bytes, control characters shown as
// '?' (the file is anyone's to write). Empty when it says nothing.
std::string holder_in(int fd) {
  char buffer[512];
  const ssize_t n = ::pread(fd, buffer, sizeof buffer, 0);
  std::string text(buffer, n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  std::replace_if(
      text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }, '?');
  return text;
}

std::string this_holder(const std::string& purpose) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return "pid " + std::to_string(::getpid()) + " on " + host + " since " + utc_now_iso8601() + " (" + purpose + ")\n";
}

std::string seconds_text(std::chrono::milliseconds duration) {
  return printf_string("%g s", std::chrono::duration<double>(duration).count());
}

}  // namespace

FileLock::FileLock(const std::string& path, std::chrono::milliseconds timeout, const std::string& purpose,
                   const std::function<void(const std::string&)>& note)
    : lock_path_(followed_symlinks(path) + ".lock") {
  const auto start = std::chrono::steady_clock::now();
  bool told = false;
  for (;;) {
    const int fd = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) throw ResultsError(lock_path_ + ": cannot create the lock file for " + path + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      if (names_open_file(lock_path_, fd)) {
        fd_ = fd;
        break;
      }
      ::close(fd);  // its holder removed it as this process opened it: lock the file there now
      continue;
    }
    const int error = errno;
    const std::string holder = holder_in(fd);
    ::close(fd);
    if (error != EWOULDBLOCK) throw ResultsError(lock_path_ + ": cannot lock it: " + std::strerror(error));
    const std::string named = holder.empty() ? "another process (it has not yet written who it is)" : holder;
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    if (waited >= timeout)
      throw ResultsError(lock_path_ + ": " + path + " is being updated by " + named + "; gave up after waiting " + seconds_text(timeout) +
                         ": let that process finish, or wait longer with --lock-timeout");
    if (!told) note("waiting for " + lock_path_ + ": " + path + " is being updated by " + named);
    told = true;
    std::this_thread::sleep_for(std::min(std::chrono::milliseconds(50), timeout - waited));
  }
  // Nobody holds the lock now, so words in the file are those of a holder that never removed it.
  if (const std::string previous = holder_in(fd_); !previous.empty())
    note("took over " + lock_path_ + " from " + previous + ", which ended without releasing it");
  const std::string holder = this_holder(purpose);
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size())) {
    const std::string reason = std::strerror(errno);
    ::close(fd_);
    throw ResultsError(lock_path_ + ": cannot write to the lock file: " + reason);
  }
}

FileLock::~FileLock() {
  // Removed while still held, so that nobody can lock the old file once it is gone; someone who
  // opened it before sees that it is gone (names_open_file) and locks the new one.
  if (names_open_file(lock_path_, fd_)) ::unlink(lock_path_.c_str());
  ::close(fd_);
}

}  // namespace kgate
