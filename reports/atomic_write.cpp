#include "reports/atomic_write.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace fb {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw InputError(fmt::format("{}: cannot write report ({})", path, why));
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  std::string s(name);
  for (char& c : s)
    if (c == '/' || c == '.') c = '_';  // keeps the name one path component with one '.' field each
  return s;
}

// ".NAME.fusebench-tmp.HOST." : the prefix of every temporary file for `target` on this host.
std::string temp_prefix(const fs::path& target) {
  return "." + target.filename().string() + ".fusebench-tmp." + host_name() + ".";
}

fs::path folder_of(const fs::path& target) {
  return target.has_parent_path() ? target.parent_path() : fs::path(".");
}

// Writes everything; 0, or the errno of the write that failed.
int write_all(int fd, const std::string& contents) {
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

void write_through(int fd, const std::string& contents, const std::string& shown) {
  if (const int err = write_all(fd, contents); err != 0) refuse(shown, fmt::format("write: {}", std::strerror(err)));
}

// Opens a character device or FIFO for writing without creating, truncating or blocking on it.
int open_special(const std::string& path, const std::string& shown) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENXIO) refuse(shown, "a FIFO that no process is reading");
    refuse(shown, fmt::format("open: {}", std::strerror(errno)));
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);  // block like any writer from here on
  return fd;
}

void write_regular(const OutputTarget& t, const std::string& shown, const std::string& contents) {
  remove_stale_temp_files(t.path);
  const fs::path target(t.path);
  const std::string temp = (folder_of(target) / (temp_prefix(target) + std::to_string(::getpid()))).string();
  auto fail = [&](const char* step, int err) {
    ::unlink(temp.c_str());
    refuse(shown, fmt::format("{}: {}", step, std::strerror(err)));
  };
  // O_EXCL: never write through something already at the temporary name (a planted symlink).
  // Our own name can only exist if a write of this same process died half-way: remove it once.
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 && errno == EEXIST && ::unlink(temp.c_str()) == 0)
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) refuse(shown, fmt::format("open: {}", std::strerror(errno)));
  struct stat old {};
  if (t.exists && ::stat(t.path.c_str(), &old) == 0) (void)::fchmod(fd, old.st_mode & 07777);  // keep its mode
  if (const int err = write_all(fd, contents); err != 0) {
    ::close(fd);
    fail("write", err);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail("fsync", err);
  }
  if (::close(fd) != 0) fail("close", errno);
  if (std::rename(temp.c_str(), t.path.c_str()) != 0) fail("rename", errno);
  // The rename itself on disk, so a crash after we return cannot bring the old file back.
  const int dir = ::open(folder_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
}

}  // namespace

OutputTarget classify_output(const std::string& path) {
  OutputTarget t;
  t.path = path;
  if (path.empty()) refuse("''", "an empty path");
  if (path == "-" || path == "/dev/stdout" || path == "/dev/fd/1" || path == "/proc/self/fd/1") {
    t.kind = OutputTarget::Kind::standard_output;
    t.identity = "(standard output)";
    return t;
  }
  if (path == "/dev/stderr" || path == "/dev/fd/2" || path == "/proc/self/fd/2") {
    t.kind = OutputTarget::Kind::standard_error;
    t.identity = "(standard error)";
    return t;
  }
  if (path.back() == '/') refuse(path, "it names a directory");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) refuse(path, std::strerror(errno));
    // A new file: its identity is its absolute path (the folder resolved, so a/../b matches b).
    std::error_code ec;
    const fs::path absolute = fs::weakly_canonical(fs::absolute(path, ec), ec);
    t.identity = ec ? path : absolute.string();
    return t;
  }
  if (S_ISLNK(st.st_mode)) {
    if (::stat(path.c_str(), &st) != 0)
      refuse(path, fmt::format("a symbolic link to a missing or unreachable file: {}", std::strerror(errno)));
    // A link to a regular file: the rename must replace the target, not the link. A link to a pipe
    // (/dev/fd/63 from a shell's >(...)) is opened through the link as it is.
    if (S_ISREG(st.st_mode)) {
      std::error_code ec;
      const fs::path real = fs::canonical(path, ec);
      if (ec) refuse(path, fmt::format("cannot resolve the symbolic link: {}", ec.message()));
      t.path = real.string();
    }
  }
  t.identity = fmt::format("{}:{}", st.st_dev, st.st_ino);
  if (S_ISDIR(st.st_mode)) refuse(path, "it is a directory");
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    t.kind = OutputTarget::Kind::special;
    return t;
  }
  if (!S_ISREG(st.st_mode)) refuse(path, "not a regular file, character device or FIFO (block device or socket)");
  t.exists = true;
  return t;
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  const OutputTarget t = classify_output(path);
  switch (t.kind) {
    case OutputTarget::Kind::standard_output:
      std::fflush(stdout);  // after what the console already printed through stdio
      write_through(STDOUT_FILENO, contents, path);
      return;
    case OutputTarget::Kind::standard_error:
      write_through(STDERR_FILENO, contents, path);
      return;
    case OutputTarget::Kind::special: {
      const int fd = open_special(t.path, path);
      const int err = write_all(fd, contents);
      ::close(fd);
      if (err != 0) refuse(path, fmt::format("write: {}", std::strerror(err)));
      return;
    }
    case OutputTarget::Kind::file:
      write_regular(t, path, contents);
      return;
  }
}

void ensure_writable(const std::string& path) {
  const OutputTarget t = classify_output(path);
  if (t.kind == OutputTarget::Kind::standard_output || t.kind == OutputTarget::Kind::standard_error) return;
  if (t.kind == OutputTarget::Kind::special) {
    // A FIFO is opened only when the report is written (opening it now would need a reader now).
    if (::access(t.path.c_str(), W_OK) != 0) refuse(path, fmt::format("open: {}", std::strerror(errno)));
    return;
  }
  // A new name in the target's folder, created and removed: the folder exists and takes files.
  const fs::path target(t.path);
  const std::string probe = (folder_of(target) / (temp_prefix(target) + std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0 && errno != EEXIST) refuse(path, fmt::format("open: {}", std::strerror(errno)));
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
  }
  if (t.exists && ::access(t.path.c_str(), F_OK) != 0) refuse(path, std::strerror(errno));
}

int remove_stale_temp_files(const std::string& target_path) {
  const fs::path target(target_path);
  const std::string prefix = temp_prefix(target);
  const fs::path folder = folder_of(target);
  DIR* dir = ::opendir(folder.c_str());
  if (!dir) return 0;
  int removed = 0;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (!name.starts_with(prefix)) continue;
    const std::string pid_text = name.substr(prefix.size());
    if (pid_text.empty() || pid_text.size() > 9 || pid_text.find_first_not_of("0123456789") != std::string::npos)
      continue;
    const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
    if (pid == ::getpid() || pid <= 0) continue;
    if (::kill(pid, 0) == 0 || errno != ESRCH) continue;  // alive (or not ours to ask): leave it
    const std::string full = (folder / name).string();
    struct stat st {};
    if (::lstat(full.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) continue;
    if (::unlink(full.c_str()) == 0) ++removed;
  }
  ::closedir(dir);
  return removed;
}

}  // namespace fb
