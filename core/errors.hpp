// Errors that end a run, each tied to one documented exit code (see cli/exit_codes.hpp).
//
// InputError: the user asked for something impossible (malformed scenario, unknown kernel,
// impossible shape, bad option). DeviceError: the GPU or its runtime failed, or is missing.
// A failed check is not an exception: it is an outcome recorded in the report.
#pragma once

#include <stdexcept>
#include <string>

namespace fb {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fb
