// fusebench exit codes (documented in README.md and in --help):
//   0  every case passed (skipped cases do not fail a run)
//   1  a check failed (fail or mistrusted), or a case errored without a device fault; for
//      compare: a regression (a SLOWER verdict or a verification change)
//   2  bad input or usage: malformed scenario, unknown kernel or axis, impossible shape, bad option,
//      reports that cannot be compared or merged
//   3  device or runtime error: no GPU where one was required, a GPU call or kernel failed
//   4  compare only: no regression, but some timing verdict is AMBIGUOUS
#pragma once

namespace fb {

enum ExitCode : int {
  kExitPass = 0,
  kExitCheckFailed = 1,
  kExitBadInput = 2,
  kExitDeviceError = 3,
  kExitAmbiguous = 4,
};

}  // namespace fb
