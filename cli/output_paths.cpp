#include "cli/output_paths.hpp"

#include <sys/stat.h>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "reports/atomic_write.hpp"

namespace fb {
namespace {

// A regular file's identity (following symlinks), as classify_output gives it; empty otherwise.
std::string input_identity(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  return fmt::format("{}:{}", st.st_dev, st.st_ino);
}

}  // namespace

void check_output_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  std::vector<std::pair<const NamedPath*, OutputTarget>> seen;
  for (const NamedPath& out : outputs) {
    if (out.path.empty()) continue;
    OutputTarget target;
    try {
      target = classify_output(out.path);
      ensure_writable(out.path);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} {}", out.label, e.what()));
    }
    for (const NamedPath& in : inputs) {
      const std::string id = input_identity(in.path);
      if (!id.empty() && target.kind == OutputTarget::Kind::file && target.exists && id == target.identity)
        throw InputError(fmt::format("{} {}: is {} ({}); writing the report would overwrite it", out.label, out.path,
                                     in.label, in.path));
    }
    // Two reports in one character device (/dev/null) are fine; in one file or one stdout, one
    // would replace or garble the other.
    if (target.kind != OutputTarget::Kind::special)
      for (const auto& [label, other] : seen)
        if (other.identity == target.identity)
          throw InputError(fmt::format("{} {} and {} {} name the same file: give each report its own path",
                                       label->label, label->path, out.label, out.path));
    seen.emplace_back(&out, target);
  }
}

}  // namespace fb
