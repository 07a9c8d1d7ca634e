#include "kgate/results/file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <map>

#include "kgate/results/results_io.hpp"

namespace kgate {
namespace {

namespace fs = std::filesystem;

std::string errno_text() { return std::strerror(errno); }

fs::path directory_of(const fs::path& file) { return file.has_parent_path() ? file.parent_path() : fs::path("."); }

// This host's name as temporary files carry it: letters, digits and '-' (no '.', which separates
// the name's fields), so that a writer on another host sharing the directory is told apart.
const std::string& host_tag() {
  static const std::string tag = [] {
    char name[256] = {};
    ::gethostname(name, sizeof name - 1);
    std::string text;
    for (const char* c = name; *c && text.size() < 64; ++c) text += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '-';
    return text.empty() ? std::string("unknown-host") : text;
  }();
  return tag;
}

// ".<name>.tmp.<host>.": what every temporary file of `target` written on this host starts with.
// Appended piece by piece: g++ 12 warns falsely (-Wrestrict) about "." + name once inlined.
std::string temp_prefix(const fs::path& target) {
  return std::string(".").append(target.filename().string()).append(".tmp.").append(host_tag()).append(".");
}

// The process that wrote a temporary file ("<pid>.<n>" after its prefix); 0 when `rest` is not that.
pid_t writer_of(const std::string& rest) {
  const std::size_t dot = rest.find('.');
  pid_t pid = 0;
  unsigned n = 0;
  const char* end = rest.data() + rest.size();
  if (dot == std::string::npos || std::from_chars(rest.data(), rest.data() + dot, pid).ptr != rest.data() + dot ||
      std::from_chars(rest.data() + dot + 1, end, n).ptr != end)
    return 0;
  return pid;
}

// Removes the temporary files of `target` that a kgate on this host left when it was killed
// mid-write (kill -9, a crash): their process is gone. Those of live processes and of other hosts
// stay; a file that cannot be removed is left for the next writer.
void remove_stale_temps(const fs::path& target) {
  const std::string prefix = temp_prefix(target);
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory_of(target), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    const pid_t pid = writer_of(name.substr(prefix.size()));
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) fs::remove(entry.path(), ec);
  }
}

// After a rename, the directory entry reaches the disk only when the directory is flushed too.
void flush_directory(const fs::path& directory, const std::string& path) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // a directory we may write but not read (mode -wx): the rename stands, unflushed
  const int flushed = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // EINVAL: a file system that has nothing to flush for a directory.
  if (flushed != 0 && error != EINVAL)
    throw ResultsError(path + ": replaced, but its directory " + directory.string() +
                       " cannot be flushed to disk: " + std::strerror(error));
}

}  // namespace

std::string followed_symlinks(const std::string& path) {
  fs::path file(path);
  for (int hops = 0; hops < 40; ++hops) {  // Linux's own limit (ELOOP)
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(file, ec))) return file.string();
    const fs::path link = fs::read_symlink(file, ec);
    if (ec) throw ResultsError(path + ": cannot read the symbolic link " + file.string() + ": " + ec.message());
    file = link.is_absolute() ? link : file.parent_path() / link;
  }
  throw ResultsError(path + ": too many levels of symbolic links");
}

StagedFiles::~StagedFiles() {
  for (const Staged& s : staged_) ::unlink(s.temp.c_str());
}

void StagedFiles::add(const std::string& path, const std::string& text) {
  const fs::path target = followed_symlinks(path);
  const fs::path directory = directory_of(target);
  remove_stale_temps(target);
  static std::atomic<unsigned> counter{0};
  const std::string temp = (directory / (temp_prefix(target) + std::to_string(::getpid()) + "." + std::to_string(counter++))).string();
  // A name of our own (not mkstemp's) so that a new file gets the usual permissions through the umask.
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw ResultsError(path + ": cannot create a temporary file in " + directory.string() + ": " + errno_text());
  const auto fail = [&](const char* what) {
    const std::string reason = errno_text();
    ::close(fd);
    ::unlink(temp.c_str());
    throw ResultsError(path + ": " + what + ": " + reason);
  };
  // The file it replaces keeps its permission bits (a group-writable baseline stays so).
  if (struct stat existing{}; ::stat(target.c_str(), &existing) == 0 && ::fchmod(fd, existing.st_mode & 07777) != 0)
    fail("cannot give the new file the old one's permissions");
  for (std::size_t written = 0; written < text.size();) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write");
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail("cannot flush to disk");
  if (::close(fd) != 0) {
    const std::string reason = errno_text();
    ::unlink(temp.c_str());
    throw ResultsError(path + ": cannot write: " + reason);
  }
  staged_.push_back({target.string(), temp});
  paths_.push_back(path);
}

void StagedFiles::commit() {
  std::map<fs::path, std::string> directories;  // each directory, with the first file replaced in it
  for (std::size_t i = 0; i < staged_.size(); ++i) {
    if (::rename(staged_[i].temp.c_str(), staged_[i].target.c_str()) != 0) {
      const std::string reason = errno_text(), path = paths_[i];
      staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(i));  // in place; the rest are removed
      throw ResultsError(path + ": cannot replace: " + reason);
    }
    directories.try_emplace(directory_of(staged_[i].target), paths_[i]);
  }
  staged_.clear();
  for (const auto& [directory, path] : directories) flush_directory(directory, path);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  StagedFiles file;
  file.add(path, text);
  file.commit();
}

}  // namespace kgate
