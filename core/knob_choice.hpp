// The run-time knobs that pick one of two forms of a kernel (FUSEBENCH_* environment variables,
// read per launch so that one build times both forms): one parse for all of them, so each
// refuses a value it does not know in the same words.
#pragma once

#include <string>

#include "core/errors.hpp"

namespace fb {

// `asked` (the variable's value, null when unset) when it is `first` or `second`; "" when it is
// unset or empty (the caller's default applies); any other value is an InputError
// "VARIABLE must be FIRST or SECOND, not 'VALUE'".
inline std::string knob_choice(const char* variable, const char* asked, const char* first, const char* second) {
  if (!asked || !*asked) return {};
  const std::string v = asked;
  if (v != first && v != second)
    throw InputError(std::string(variable) + " must be " + first + " or " + second + ", not '" + v + "'");
  return v;
}

}  // namespace fb
