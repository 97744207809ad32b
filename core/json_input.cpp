#include "core/json_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/utf8.hpp"

namespace fb {
namespace {

using Json = nlohmann::ordered_json;

// Builds an ordered DOM from SAX events: each object's keys go in a hash set (duplicates are an
// error, lookups O(1)) and its members are appended to the ordered map's vector directly, so n keys
// cost O(n), not the O(n^2) of inserting into an ordered map one lookup at a time.
class CheckedDomBuilder {
 public:
  CheckedDomBuilder(Json& root, const std::string& path, int max_depth)
      : root_(root), path_(path), max_depth_(max_depth) {}

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string&) { return put(Json(v)); }
  bool string(std::string& v) { return put(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return put(Json::binary(std::move(v))); }

  bool start_object(std::size_t) {
    enter(Json::object());
    keys_.emplace_back();
    return true;
  }
  bool key(std::string& k) {
    if (!keys_.back().insert(k).second)
      throw InputError(fmt::format("{}: {}: duplicate key (JSON objects take each key once)", path_,
                                   text_excerpt(where() + (where().empty() ? "" : ".") + k, 120)));
    auto& members = static_cast<std::vector<std::pair<const std::string, Json>>&>(
        stack_.back()->get_ref<Json::object_t&>());
    members.emplace_back(k, nullptr);
    slot_ = &members.back().second;
    names_.push_back(k);
    return true;
  }
  bool end_object() {
    keys_.pop_back();
    stack_.pop_back();
    if (!stack_.empty() && stack_.back()->is_object()) names_.pop_back();
    return true;
  }
  bool start_array(std::size_t) {
    enter(Json::array());
    return true;
  }
  bool end_array() {
    stack_.pop_back();
    if (!stack_.empty() && stack_.back()->is_object()) names_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    std::string what = e.what();
    if (const auto p = what.find("] "); what.starts_with("[json.exception") && p != std::string::npos)
      what = what.substr(p + 2);
    // The parser quotes the last token read, which may be a megabyte-long string.
    throw InputError(fmt::format("{}: malformed JSON: {}", path_, text_excerpt(what, 200)));
  }

 private:
  // The JSON path of the value being built ("cases.fp8_quant/per_token"), for messages.
  std::string where() const {
    std::string s;
    for (const std::string& n : names_) s += (s.empty() ? "" : ".") + n;
    return s;
  }
  void enter(Json value) {
    if (static_cast<int>(stack_.size()) >= max_depth_)
      throw InputError(fmt::format("{}: {}: nested deeper than {} levels (the limit for any JSON input)", path_,
                                   where().empty() ? "(top level)" : text_excerpt(where(), 120), max_depth_));
    Json* placed = place(std::move(value));
    stack_.push_back(placed);
  }
  bool put(Json value) {
    Json* placed = place(std::move(value));
    if (!stack_.empty() && stack_.back()->is_object()) names_.pop_back();
    (void)placed;
    return true;
  }
  Json* place(Json value) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    if (stack_.back()->is_array()) {
      auto& items = stack_.back()->get_ref<Json::array_t&>();
      items.push_back(std::move(value));
      return &items.back();
    }
    *slot_ = std::move(value);
    return slot_;
  }

  Json& root_;
  const std::string& path_;
  int max_depth_;
  std::vector<Json*> stack_;                             // open containers, innermost last
  std::vector<std::unordered_set<std::string>> keys_;    // keys seen, per open object
  std::vector<std::string> names_;                       // keys leading to the current value
  Json* slot_ = nullptr;                                 // the member a key just opened
};

}  // namespace

std::uint64_t input_size_limit(std::uint64_t default_limit) {
  const char* env = std::getenv("FUSEBENCH_MAX_INPUT_BYTES");
  if (!env || !*env) return default_limit;
  std::uint64_t v = 0;
  const char* end = env + std::strlen(env);
  const auto [p, ec] = std::from_chars(env, end, v);
  if (ec != std::errc() || p != end || v == 0)
    throw InputError(fmt::format("FUSEBENCH_MAX_INPUT_BYTES={}: not a positive number of bytes", text_excerpt(env)));
  return v;
}

std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw InputError(fmt::format("{}: cannot open {} ({})", path, what, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw InputError(fmt::format("{}: cannot open {} (it is a directory)", path, what));
  }
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw InputError(fmt::format("{}: {} is {} bytes, past the {}-byte limit (FUSEBENCH_MAX_INPUT_BYTES raises it)",
                                 path, what, st.st_size, max_bytes));
  }
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = std::strerror(errno);
      ::close(fd);
      throw InputError(fmt::format("{}: cannot read {} ({})", path, what, why));
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {  // a device or pipe that does not end (/dev/zero)
      ::close(fd);
      throw InputError(fmt::format("{}: {} is larger than the {}-byte limit (FUSEBENCH_MAX_INPUT_BYTES raises it)",
                                   path, what, max_bytes));
    }
  }
  ::close(fd);
  return text;
}

Json parse_json_checked(const std::string& text, const std::string& path, int max_depth) {
  Json root;
  CheckedDomBuilder builder(root, path, max_depth);
  Json::sax_parse(text, &builder);
  return root;
}

std::string json_excerpt(const Json& value, std::size_t max_chars) {
  // Depth is bounded by the parser, so dump() cannot overflow the stack; its size is bounded by
  // the file size limit. Only the first max_chars are kept.
  return text_excerpt(value.dump(-1, ' ', false, Json::error_handler_t::replace), max_chars);
}

std::string text_excerpt(const std::string& text, std::size_t max_chars) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size() && out.size() < max_chars) {
    const std::size_t n = utf8_decode(text, i).second;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (n == 0 || c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  if (i < text.size()) out += "...";
  return out;
}

}  // namespace fb
