#include "core/registry.hpp"

#include <stdexcept>

namespace fb {

void Registry::add(KernelCase c) {
  if (find(c.name)) throw std::logic_error("kernel case registered twice: " + c.name);
  cases_.push_back(std::move(c));
}

const KernelCase* Registry::find(std::string_view name) const {
  for (const KernelCase& c : cases_)
    if (c.name == name) return &c;
  return nullptr;
}

std::vector<const KernelCase*> Registry::match(std::string_view glob) const {
  std::vector<const KernelCase*> out;
  for (const KernelCase& c : cases_)
    if (glob_match(glob, c.name) || glob_match(glob, c.family)) out.push_back(&c);
  return out;
}

bool glob_match(std::string_view pattern, std::string_view text) {
  // Iterative matcher with one backtrack point for the last '*'.
  std::size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace fb
