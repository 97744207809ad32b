#include "core/shard.hpp"

#include <charconv>

#include "core/errors.hpp"

namespace fb {

namespace {

std::int64_t parse_part(const std::string& whole, std::string_view part) {
  std::int64_t value = -1;
  const auto* end = part.data() + part.size();
  auto [ptr, ec] = std::from_chars(part.data(), end, value);
  if (part.empty() || ec != std::errc{} || ptr != end)
    throw InputError("--shard '" + whole + "': expected I/N with decimal integers, e.g. 0/4");
  return value;
}

}  // namespace

std::string Shard::text() const { return std::to_string(index) + "/" + std::to_string(count); }

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw InputError("--shard '" + text + "': expected I/N, e.g. 0/4");
  std::string_view view(text);
  Shard shard;
  shard.index = parse_part(text, view.substr(0, slash));
  shard.count = parse_part(text, view.substr(slash + 1));
  if (shard.count < 1 || shard.count > 65536)
    throw InputError("--shard '" + text + "': N must be between 1 and 65536");
  if (shard.index < 0 || shard.index >= shard.count)
    throw InputError("--shard '" + text + "': I must be in [0, N)");
  return shard;
}

}  // namespace fb
