#include "reports/atomic_write.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace fb {

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::filesystem::path target(path);
  const std::string temp = (target.parent_path() / ("." + target.filename().string() + ".tmp-" +
                                                    std::to_string(::getpid()))).string();
  auto fail = [&](const char* step) {
    const std::string why = std::strerror(errno);
    ::unlink(temp.c_str());
    throw InputError(fmt::format("{}: cannot write report ({}: {})", path, step, why));
  };
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("open");
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  if (::close(fd) != 0) fail("close");
  if (std::rename(temp.c_str(), path.c_str()) != 0) fail("rename");
}

void ensure_writable(const std::string& path) {
  const std::filesystem::path target(path);
  const std::string probe = (target.parent_path() / ("." + target.filename().string() + ".probe-" +
                                                     std::to_string(::getpid()))).string();
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(fmt::format("{}: cannot write report (open: {})", path, std::strerror(errno)));
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace fb
