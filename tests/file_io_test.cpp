// Replacing files (file_io.hpp): a replaced file keeps its permission bits, a symbolic link stays a
// link, the temporary files of a killed writer are removed by the next one, a set of files is put
// in place whole or not at all, and kgate report cut short by a full disk leaves the old report.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kgate/results/file_io.hpp"
#include "kgate/results/results_io.hpp"
#include "tests/synthetic_results.hpp"

namespace {

namespace fs = std::filesystem;
using kgate::ResultsError;
using kgate::StagedFiles;
using kgate::write_file_atomically;
using kgate::synthetic::read_text;
using kgate::synthetic::TempDir;

mode_t mode_of(const std::string& path) {
  struct stat s {};
  EXPECT_EQ(::stat(path.c_str(), &s), 0) << path;
  return s.st_mode & 07777;
}

// The names in `dir` that start with `prefix`: a file's temporary files are ".<name>.tmp.*".
std::vector<std::string> names_starting(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.path().filename().string().starts_with(prefix)) names.push_back(e.path().filename().string());
  return names;
}

TEST(FileIo, AReplacedFileKeepsItsPermissionBits) {
  const TempDir dir;
  const std::string path = dir.write("base.json", "old\n");
  for (const mode_t mode : {mode_t{0664}, mode_t{0600}, mode_t{0640}}) {
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    write_file_atomically(path, "new\n");
    EXPECT_EQ(mode_of(path), mode) << std::oct << mode;
    EXPECT_EQ(read_text(path), "new\n");
  }
  // A new file gets the umask's permissions, as any other program's would.
  const mode_t umask_bits = ::umask(022);
  write_file_atomically(dir.file("fresh.json"), "x");
  ::umask(umask_bits);
  EXPECT_EQ(mode_of(dir.file("fresh.json")), 0644u);
}

TEST(FileIo, ASymbolicLinkStaysALinkAndItsTargetIsReplaced) {
  const TempDir dir;
  fs::create_directories(dir.file("store"));
  const std::string target = dir.write("store/kgate.json", "old\n");
  fs::create_directories(dir.file("baselines/nvidia-h100"));
  fs::create_symlink("../../store/kgate.json", dir.file("baselines/nvidia-h100/kgate.json"));  // relative, as checked in
  fs::create_symlink(dir.file("baselines/nvidia-h100/kgate.json"), dir.file("chain.json"));    // a link to the link
  EXPECT_EQ(kgate::followed_symlinks(dir.file("chain.json")), fs::path(dir.file("baselines/nvidia-h100/../../store/kgate.json")).string());

  write_file_atomically(dir.file("chain.json"), "new\n");
  EXPECT_TRUE(fs::is_symlink(dir.file("chain.json")));
  EXPECT_TRUE(fs::is_symlink(dir.file("baselines/nvidia-h100/kgate.json")));
  EXPECT_EQ(read_text(target), "new\n");
  EXPECT_TRUE(names_starting(dir.file("store"), ".kgate.json.tmp.").empty());

  // A dangling link: its target is created.
  fs::create_symlink("store/later.json", dir.file("later.json"));
  write_file_atomically(dir.file("later.json"), "made\n");
  EXPECT_TRUE(fs::is_symlink(dir.file("later.json")));
  EXPECT_EQ(read_text(dir.file("store/later.json")), "made\n");

  fs::create_symlink("loop-b", dir.file("loop-a"));
  fs::create_symlink("loop-a", dir.file("loop-b"));
  EXPECT_THROW(write_file_atomically(dir.file("loop-a"), "x"), ResultsError);
}

TEST(FileIo, TheNextWriterRemovesTheTemporaryFilesOfAKilledOne) {
  const TempDir dir;
  const std::string path = dir.write("kgate.json", "old\n");
  // A writer killed between writing its temporary file and renaming it (kill -9 skips every
  // destructor, as _exit does).
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto* killed = new StagedFiles;  // never destroyed
    killed->add(path, std::string(1 << 20, 'x'));
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_EQ(names_starting(dir.path().string(), ".kgate.json.tmp.").size(), 1u);

  // A live writer's temporary file (this process's), and one of a synthetic other host whose
  // process this host cannot see: both stay.
  StagedFiles live;
  live.add(path, "live\n");
  dir.write(".kgate.json.tmp.synthetic-other-host.999999999.0", "theirs");
  write_file_atomically(path, "new\n");
  EXPECT_EQ(read_text(path), "new\n");
  const std::vector<std::string> left = names_starting(dir.path().string(), ".kgate.json.tmp.");
  EXPECT_EQ(left.size(), 2u);
  for (const std::string& name : left)
    EXPECT_TRUE(name.find("." + std::to_string(::getpid()) + ".") != std::string::npos ||
                name.find("synthetic-other-host") != std::string::npos)
        << name;
}

TEST(FileIo, AStagedSetIsPutInPlaceWholeOrNotAtAll) {
  const TempDir dir;
  dir.write("report.md", "old report\n");
  {
    StagedFiles files;
    files.add(dir.file("chart.svg"), "<svg/>");
    files.add(dir.file("report.md"), "new report\n");
    EXPECT_EQ(read_text(dir.file("report.md")), "old report\n");  // nothing in place before commit
  }                                                               // destroyed uncommitted: as a failure part way leaves it
  EXPECT_EQ(read_text(dir.file("report.md")), "old report\n");
  EXPECT_FALSE(fs::exists(dir.file("chart.svg")));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);

  StagedFiles files;
  files.add(dir.file("chart.svg"), "<svg/>");
  files.add(dir.file("report.md"), "new report\n");
  files.commit();
  EXPECT_EQ(read_text(dir.file("report.md")), "new report\n");
  EXPECT_EQ(read_text(dir.file("chart.svg")), "<svg/>");
  EXPECT_EQ(files.paths(), (std::vector<std::string>{dir.file("chart.svg"), dir.file("report.md")}));
  EXPECT_THROW(write_file_atomically(dir.file("no-such-dir/out.json"), "x"), ResultsError);
}

// kgate report with at most `limit` bytes per file (RLIMIT_FSIZE: a write past it fails with EFBIG,
// as a full disk fails one with ENOSPC); its exit status.
int report_with_file_size_limit(const std::string& run, const std::string& out, rlim_t limit, const std::string& log) {
  const pid_t child = ::fork();
  if (child == 0) {
    const rlimit size{limit, limit};
    ::signal(SIGXFSZ, SIG_IGN);                                              // the write fails instead of killing the process
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);  // before the limit: the log may grow
    ::dup2(fd, STDOUT_FILENO);
    ::dup2(fd, STDERR_FILENO);
    ::setrlimit(RLIMIT_FSIZE, &size);
    ::execl(KGATE_CLI_PATH, "kgate", "report", run.c_str(), "--out", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(FileIo, AReportCutShortByAFullDiskLeavesTheLastWholeReport) {
  const TempDir dir;
  const std::string run = KGATE_TEST_DATA_DIR "/recorded-h100-run-a.json.gz", out = dir.file("report");
  // Room for the charts but not for report.html: nothing of the new report may appear.
  EXPECT_EQ(report_with_file_size_limit(run, out, 200 << 10, dir.file("cut.log")), 2) << read_text(dir.file("cut.log"));
  EXPECT_NE(read_text(dir.file("cut.log")).find("report.html: cannot write: File too large"), std::string::npos)
      << read_text(dir.file("cut.log"));
  EXPECT_TRUE(!fs::exists(out) || fs::is_empty(out)) << "files left in " << out;

  ASSERT_EQ(report_with_file_size_limit(run, out, RLIM_INFINITY, dir.file("whole.log")), 0) << read_text(dir.file("whole.log"));
  const std::string markdown = read_text(out + "/report.md"), html = read_text(out + "/report.html");
  ASSERT_FALSE(markdown.empty());
  ASSERT_GT(html.size(), std::size_t{200} << 10);

  // Cut short again over a whole report: the old one stays, every file of it, and no temporary file.
  const std::size_t files = static_cast<std::size_t>(std::distance(fs::directory_iterator(out), fs::directory_iterator()));
  EXPECT_EQ(report_with_file_size_limit(run, out, 200 << 10, dir.file("cut.log")), 2) << read_text(dir.file("cut.log"));
  EXPECT_EQ(read_text(out + "/report.md"), markdown);
  EXPECT_EQ(read_text(out + "/report.html"), html);
  EXPECT_EQ(static_cast<std::size_t>(std::distance(fs::directory_iterator(out), fs::directory_iterator())), files);
}

}  // namespace
