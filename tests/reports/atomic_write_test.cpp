// Report paths: a regular file is replaced atomically (old or complete new, even under SIGKILL),
// special files are written through and never replaced or deleted, symlinks are followed to an
// existing target, directories and dangling links are refused, and stale temporary files of dead
// writers are removed by the next write.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "reports/atomic_write.hpp"

namespace fb {
namespace {

namespace fs = std::filesystem;

class AtomicWrite : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt_name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string fmt_name() {
    return "fusebench-atomic-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::vector<std::string> temp_files() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().find(".fusebench-tmp.") != std::string::npos) out.push_back(e.path().string());
    return out;
  }
  static std::string host() {
    char name[HOST_NAME_MAX + 1] = {};
    ::gethostname(name, sizeof name - 1);
    std::string s(name[0] ? name : "localhost");
    for (char& c : s)
      if (c == '/' || c == '.') c = '_';
    return s;
  }
  fs::path dir_;
};

std::string error_of(const std::string& p, const std::string& text = "x") {
  try {
    write_file_atomically(p, text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(written)";
}

TEST_F(AtomicWrite, ReplacesARegularFileAndKeepsItsMode) {
  const std::string p = path("r.json");
  write_file_atomically(p, "old");
  ::chmod(p.c_str(), 0600);
  write_file_atomically(p, "new");
  EXPECT_EQ(read(p), "new");
  struct stat st {};
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(temp_files().empty());
}

TEST_F(AtomicWrite, DevNullStaysADevice) {
  write_file_atomically("/dev/null", "report");
  ensure_writable("/dev/null");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null was replaced by a regular file";
}

TEST_F(AtomicWrite, FifoIsWrittenThroughAndNeverReplaced) {
  const std::string p = path("pipe");
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  // No reader: an error at once, not a hang, and the FIFO is left alone.
  EXPECT_NE(error_of(p).find("a FIFO that no process is reading"), std::string::npos);
  std::string got;
  std::thread reader([&] { got = read(p); });
  // Wait for the reader to open its end (a writer then finds it).
  for (int i = 0; i < 200; ++i) {
    try {
      write_file_atomically(p, "through the fifo");
      break;
    } catch (const InputError&) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  reader.join();
  EXPECT_EQ(got, "through the fifo");
  struct stat st {};
  ASSERT_EQ(::lstat(p.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(AtomicWrite, SymlinksAreFollowedToAnExistingTarget) {
  const std::string target = path("target.json"), link = path("link.json");
  write_file_atomically(target, "old");
  fs::create_symlink(target, link);
  write_file_atomically(link, "new");
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(target), "new");
  // A dangling link could point anywhere: refused, and nothing is created.
  const std::string dangling = path("dangling.json");
  fs::create_symlink(path("absent/x.json"), dangling);
  EXPECT_NE(error_of(dangling).find("a symbolic link to a missing"), std::string::npos);
  EXPECT_THROW(ensure_writable(dangling), InputError);
}

TEST_F(AtomicWrite, PipesBehindProcFdLinksAreWrittenThrough) {
  // A shell's >(reader) hands over /dev/fd/N: a symlink to a pipe that has no path of its own.
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string p = "/dev/fd/" + std::to_string(fds[1]);
  write_file_atomically(p, "piped");
  ::close(fds[1]);
  char buffer[16] = {};
  EXPECT_EQ(::read(fds[0], buffer, sizeof buffer), 5);
  EXPECT_EQ(std::string(buffer), "piped");
  ::close(fds[0]);
}

TEST_F(AtomicWrite, DirectoriesAndMissingFoldersAreRefused) {
  EXPECT_NE(error_of(dir_.string()).find("it is a directory"), std::string::npos);
  EXPECT_NE(error_of(dir_.string() + "/").find("names a directory"), std::string::npos);
  EXPECT_THROW(ensure_writable(dir_.string()), InputError);
  EXPECT_NE(error_of(path("absent/r.json")).find("cannot write report (open: No such file"), std::string::npos);
  EXPECT_THROW(ensure_writable(path("absent/r.json")), InputError);
  EXPECT_TRUE(fs::is_directory(dir_));
}

TEST_F(AtomicWrite, SameDestinationHasOneIdentity) {
  const std::string p = path("r.json");
  EXPECT_EQ(classify_output(p).identity, classify_output(dir_.string() + "/./r.json").identity);
  write_file_atomically(p, "x");
  fs::create_symlink(p, path("l.json"));
  EXPECT_EQ(classify_output(p).identity, classify_output(path("l.json")).identity);
  EXPECT_EQ(classify_output("-").kind, OutputTarget::Kind::standard_output);
  EXPECT_EQ(classify_output("/dev/stdout").identity, classify_output("-").identity);
}

TEST_F(AtomicWrite, StaleTempFilesOfDeadWritersAreRemoved) {
  const std::string p = path("r.json");
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  const std::string stale = path(".r.json.fusebench-tmp." + host() + "." + std::to_string(dead));
  const std::string live = path(".r.json.fusebench-tmp." + host() + "." + std::to_string(::getppid()));
  const std::string other_host = path(".r.json.fusebench-tmp.elsewhere." + std::to_string(dead));
  for (const std::string& f : {stale, live, other_host}) std::ofstream(f) << "partial";
  write_file_atomically(p, "new");
  EXPECT_FALSE(fs::exists(stale)) << "a dead writer's temp file survived";
  EXPECT_TRUE(fs::exists(live)) << "a live process's temp file was removed";
  EXPECT_TRUE(fs::exists(other_host)) << "another host's temp file was removed";
  EXPECT_EQ(read(p), "new");
}

// SIGKILL during a write: the target holds the old report or the complete new one, and the next
// write removes the killed writer's temporary file.
TEST_F(AtomicWrite, KillDuringWriteLeavesOldOrCompleteNew) {
  const std::string p = path("r.json");
  const std::string old_text = "old report\n";
  const std::string new_text(48 << 20, 'n');  // large enough that the kill lands mid-write
  bool caught_mid_write = false;
  for (int attempt = 0; attempt < 5 && !caught_mid_write; ++attempt) {
    write_file_atomically(p, old_text);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      write_file_atomically(p, new_text);
      ::_exit(0);
    }
    // Kill as soon as the temporary file appears (the child is between open and rename).
    for (int i = 0; i < 20000 && temp_files().empty(); ++i) std::this_thread::sleep_for(std::chrono::microseconds(50));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    const std::string now = read(p);
    EXPECT_TRUE(now == old_text || now == new_text) << "a torn report of " << now.size() << " bytes";
    caught_mid_write = !temp_files().empty();
  }
  EXPECT_TRUE(caught_mid_write) << "the kill never landed mid-write (the test proves nothing)";
  write_file_atomically(p, "next");
  EXPECT_TRUE(temp_files().empty()) << "the killed writer's temp file was not removed";
  EXPECT_EQ(read(p), "next");
}

}  // namespace
}  // namespace fb
