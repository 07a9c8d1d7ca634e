// One writer at a time (file_lock.hpp), between real processes: a second writer waits and, when
// the time runs out, names the holder; a holder killed with its lock held (kill -9) blocks nobody
// and is named by the writer that takes over; every name of a file shares one lock.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "kgate/results/file_lock.hpp"
#include "kgate/results/results_io.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using kgate::FileLock;
using kgate::ResultsError;
using kgate::synthetic::TempDir;

// A process that takes the lock of `path`, says so, and holds it until told to go (a byte on its
// pipe, or the pipe closed) or for `hold` at most.
class Holder {
 public:
  Holder(const std::string& path, std::chrono::milliseconds hold = 60s) {
    int ready[2], go[2];
    EXPECT_EQ(::pipe(ready), 0);
    EXPECT_EQ(::pipe(go), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(ready[0]);
      ::close(go[1]);
      {
        const FileLock lock(path, 0ms, "synthetic holder", [](const std::string&) {});
        if (::write(ready[1], "1", 1) != 1) ::_exit(1);
        pollfd wait{go[0], POLLIN, 0};
        ::poll(&wait, 1, static_cast<int>(hold.count()));
      }
      ::_exit(0);
    }
    ::close(ready[1]);
    ::close(go[0]);
    go_ = go[1];
    char byte = 0;
    EXPECT_EQ(::read(ready[0], &byte, 1), 1) << "the holder did not take the lock";
    ::close(ready[0]);
  }
  ~Holder() {
    ::close(go_);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  void kill() const { ::kill(pid_, SIGKILL); }

 private:
  pid_t pid_ = 0;
  int go_ = -1;
};

TEST(FileLock, ASecondWriterGivesUpNamingTheHolder) {
  const TempDir dir;
  const std::string path = dir.file("kgate.json");
  const Holder holder(path);
  std::vector<std::string> notes;
  const auto start = std::chrono::steady_clock::now();
  try {
    const FileLock lock(path, 300ms, "synthetic waiter", [&](const std::string& note) { notes.push_back(note); });
    FAIL() << "took a lock that another process holds";
  } catch (const ResultsError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path + ".lock: " + path + " is being updated by pid " + std::to_string(holder.pid()) + " on "),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("(synthetic holder); gave up after waiting 0.3 s"), std::string::npos) << message;
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  ASSERT_EQ(notes.size(), 1u);  // one "waiting" line, not one per try
  EXPECT_NE(notes[0].find("waiting for " + path + ".lock"), std::string::npos) << notes[0];
}

TEST(FileLock, AWaitingWriterGetsTheLockWhenTheHolderIsDone) {
  const TempDir dir;
  const std::string path = dir.file("kgate.json");
  std::vector<std::string> notes;
  {
    const Holder holder(path, 200ms);
    const FileLock lock(path, 10s, "synthetic waiter", [&](const std::string& note) { notes.push_back(note); });
    ASSERT_EQ(notes.size(), 1u);  // waited, and took over nothing: the holder removed its lock file
    EXPECT_NE(notes[0].find("(synthetic holder)"), std::string::npos) << notes[0];
    EXPECT_NE(kgate::synthetic::read_text(path + ".lock").find("pid " + std::to_string(::getpid()) + " on "), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(path + ".lock"));  // removed on release
}

TEST(FileLock, ALockWhoseHolderWasKilledIsTakenOverWithANote) {
  const TempDir dir;
  const std::string path = dir.file("kgate.json");
  pid_t killed = 0;
  {
    const Holder holder(path);
    killed = holder.pid();
    holder.kill();
  }
  ASSERT_TRUE(fs::exists(path + ".lock"));  // left behind, naming the dead holder
  std::vector<std::string> notes;
  const FileLock lock(path, 0ms, "synthetic successor", [&](const std::string& note) { notes.push_back(note); });
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("took over " + path + ".lock from pid " + std::to_string(killed) + " on "), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("(synthetic holder), which ended without releasing it"), std::string::npos) << notes[0];
}

TEST(FileLock, EveryNameOfAFileSharesItsLock) {
  const TempDir dir;
  const std::string target = dir.write("kgate.json", "{}"), link = dir.file("link.json");
  fs::create_symlink("kgate.json", link);
  const Holder holder(target);
  EXPECT_THROW(FileLock(link, 0ms, "synthetic", [](const std::string&) {}), ResultsError);
  EXPECT_THROW(FileLock(dir.file("missing/kgate.json"), 0ms, "synthetic", [](const std::string&) {}), ResultsError);
}

}  // namespace
