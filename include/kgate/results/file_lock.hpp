#pragma once
// One writer at a time for a file kgate reads, changes and writes back (a baseline: kgate baseline
// update), so that concurrent updates of different entries all land (kgate's docs/reliability.md).
//
// The lock is "<file>.lock" beside the file, held with flock(2) and naming its holder (pid, host,
// since when, what it does) for the messages of those who wait, as git's index.lock does. flock
// rather than git's create-exclusive file: the kernel releases a flock when its holder dies, so a
// kill -9 never leaves a lock that blocks every later writer, and no writer has to guess from a pid
// whether a lock is stale (which works on one host only, and races when two writers break the same
// stale lock). The holder removes the file when it is done; a file left behind by a killed holder is
// taken over, with a note naming it.
#include <chrono>
#include <functional>
#include <string>

namespace kgate {

class FileLock {
 public:
  // Takes the lock of `path` (the file its symbolic links lead to, so that every name of one file
  // shares one lock), waiting up to `timeout` while another process holds it. `purpose` tells the
  // others what this process does ("kgate baseline update run.json"). `note` is called once when
  // this process has to wait, naming the holder, and when it takes over a lock left by a holder
  // that ended without releasing it. Throws ResultsError naming the holder when `timeout` passes,
  // and when the lock file cannot be created.
  FileLock(const std::string& path, std::chrono::milliseconds timeout, const std::string& purpose,
           const std::function<void(const std::string&)>& note);
  ~FileLock();  // removes the lock file, then releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  const std::string& lock_path() const { return lock_path_; }

 private:
  std::string lock_path_;
  int fd_ = -1;
};

}  // namespace kgate
