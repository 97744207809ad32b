// Quoting for command lines a user pastes into a POSIX shell (repro lines).
#pragma once

#include <string>

namespace fb {

// `arg` as one shell word: unchanged when it holds only characters no shell treats specially
// (letters, digits and _ @ % + = : , . / -), else in single quotes with each ' written '\''.
std::string shell_quote(const std::string& arg);

}  // namespace fb
