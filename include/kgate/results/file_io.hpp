#pragma once
// Writing files so that a reader, a kill -9 or a full disk never leaves a file half-written
// (kgate's docs/reliability.md). Every write goes to a temporary file beside its target, is
// flushed to disk, and is renamed over the target; the directory is flushed after the rename.
// Errors are ResultsError (results_io.hpp), one line naming the file and the system's reason.
#include <string>
#include <vector>

namespace kgate {

// The file `path` names once every symbolic link on the way is followed (`path` itself when it is
// not a link; a dangling link gives the file it points to, which need not exist).
std::string followed_symlinks(const std::string& path);

// Several files replaced together: each is written to its temporary file by add(), and commit()
// renames them all into place in the order they were added. A failure while adding (a full disk)
// leaves every target as it was; a set destroyed before commit() removes its temporary files.
// A replaced file keeps its permission bits, and a symbolic link stays a link: its target is
// replaced. Temporary files are named .<name>.tmp.<host>.<pid>.<n>, so that a later writer
// removes those a killed kgate on this host left behind (their process is gone).
class StagedFiles {
 public:
  StagedFiles() = default;
  ~StagedFiles();
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  void add(const std::string& path, const std::string& text);
  void commit();
  const std::vector<std::string>& paths() const { return paths_; }  // as added

 private:
  struct Staged {
    std::string target, temp;
  };
  std::vector<Staged> staged_;
  std::vector<std::string> paths_;
};

// One file replaced as a StagedFiles set of one: a reader sees the old or the new file, never a part.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace kgate
