// Reading JSON that other tools wrote (scenarios, reports) without trusting it.
//
// fusebench runs in CI, often as root, on files it did not write. Reading one must never crash,
// hang or run out of memory, and whatever it rejects is one InputError line naming the file:
//   - size: a file is read up to a limit (scenarios 16 MiB, reports 256 MiB by default; the
//     environment variable FUSEBENCH_MAX_INPUT_BYTES overrides both), so `/dev/zero` or a runaway
//     generator ends in an error, not an out-of-memory kill;
//   - kind: a directory, a missing or unreadable file each say so (not "malformed JSON");
//   - depth: nesting past a limit (64 by default) is rejected while parsing, before any recursive
//     code (dump, destruction, comparison) could overflow the stack;
//   - duplicate keys: rejected with their JSON path (JSON leaves them undefined; last-wins would
//     silently drop a sweep);
//   - time: parsing and key de-duplication are linear in the input (a hash set per object), where
//     building an ordered object key by key would be quadratic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace fb {

inline constexpr std::uint64_t kMaxScenarioBytes = std::uint64_t{16} << 20;
inline constexpr std::uint64_t kMaxReportBytes = std::uint64_t{256} << 20;
inline constexpr int kMaxJsonDepth = 64;

// The limit for one kind of file: FUSEBENCH_MAX_INPUT_BYTES when set (a positive integer of
// bytes; anything else is an InputError), else `default_limit`.
std::uint64_t input_size_limit(std::uint64_t default_limit);

// The whole file at `path` (a regular file, FIFO or character device; `what` names it in errors:
// "scenario file", "report"). InputError: missing, a directory, unreadable, or past `max_bytes`.
std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes);

// Parses `text`; `path` prefixes every error. Keys keep their order. InputError: malformed JSON
// (with line and column), nesting deeper than `max_depth`, or a key given twice in one object.
nlohmann::ordered_json parse_json_checked(const std::string& text, const std::string& path,
                                          int max_depth = kMaxJsonDepth);

// At most `max_chars` of `value`'s JSON text, with "..." when cut: for error messages, which must
// stay one short line whatever the input holds. Cuts between UTF-8 characters.
std::string json_excerpt(const nlohmann::ordered_json& value, std::size_t max_chars = 60);
// The same for a plain string (quoted as is, control bytes shown as \xNN).
std::string text_excerpt(const std::string& text, std::size_t max_chars = 60);

}  // namespace fb
