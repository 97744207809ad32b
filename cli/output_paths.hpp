// Every output path of a command, checked before any work is done: each can be written (see
// reports/atomic_write.hpp for what each kind of path gets), no two name the same file, and none
// names one of the command's inputs (the scenario, a report being compared). A late failure would
// lose hours of results; an overlap would silently overwrite an input or a sibling report.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fb {

struct NamedPath {
  std::string label;  // "--json", "the scenario file", "BASE"
  std::string path;   // empty: not given (skipped)
};

// InputError (exit 2) naming the option, the path and the conflict.
void check_output_paths(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

}  // namespace fb
