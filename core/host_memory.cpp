#include "core/host_memory.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace fb {
namespace {

// The first line of a small kernel file as a byte count; empty for "max", a missing file or junk.
std::optional<std::int64_t> read_count(const std::string& path) {
  std::ifstream in(path);
  std::int64_t v = 0;
  if (!(in >> v) || v < 0) return std::nullopt;
  return v;
}

std::optional<std::int64_t> mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  std::int64_t kib = 0;
  while (in >> key >> kib) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return std::nullopt;
}

// This process's cgroup directory (v2: the "0::" line of /proc/self/cgroup).
std::string cgroup_v2_dir() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("0::")) return "/sys/fs/cgroup" + line.substr(3);
  return "/sys/fs/cgroup";
}

std::optional<std::int64_t> cgroup_room() {
  const std::string dir = cgroup_v2_dir();
  auto limit = read_count(dir + "/memory.max");
  auto used = read_count(dir + "/memory.current");
  if (!limit) {
    limit = read_count("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    used = read_count("/sys/fs/cgroup/memory/memory.usage_in_bytes");
  }
  // v1 reports "no limit" as a huge number; treat anything past 2^60 as none.
  if (!limit || *limit > (std::int64_t{1} << 60)) return std::nullopt;
  return std::max<std::int64_t>(0, *limit - used.value_or(0));
}

}  // namespace

std::optional<std::int64_t> available_host_memory_bytes() {
  const auto host = mem_available();
  const auto group = cgroup_room();
  if (host && group) return std::min(*host, *group);
  return host ? host : group;
}

}  // namespace fb
