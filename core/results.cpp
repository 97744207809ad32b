#include "core/results.hpp"

namespace fb {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::pass: return "pass";
    case Outcome::fail: return "fail";
    case Outcome::error: return "error";
    case Outcome::skipped: return "skipped";
    case Outcome::mistrusted: return "mistrusted";
  }
  return "?";
}

}  // namespace fb
