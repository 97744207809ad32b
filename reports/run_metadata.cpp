#include "reports/run_metadata.hpp"

#include <chrono>
#include <cstring>
#include <ctime>

#include <unistd.h>

#include <fmt/format.h>

namespace fb {

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::map<std::string, std::string> fusebench_knobs() {
  constexpr const char* kPrefix = "FUSEBENCH_";
  std::map<std::string, std::string> knobs;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq || std::strncmp(*e, kPrefix, std::strlen(kPrefix)) != 0) continue;
    // FUSEBENCH_GIT_SHA names the commit at configure time (run.build.git_sha records it); it
    // chooses no kernel, and a knob line saying two commits differ would only repeat the header.
    if (std::strncmp(*e, "FUSEBENCH_GIT_SHA=", 18) == 0) continue;
    knobs.emplace(std::string(*e, static_cast<std::size_t>(eq - *e)), std::string(eq + 1));
  }
  return knobs;
}

OutcomeCounts count_outcomes(const std::vector<CaseResult>& results) {
  OutcomeCounts c;
  for (const CaseResult& r : results) {
    switch (r.outcome) {
      case Outcome::pass: ++c.pass; break;
      case Outcome::fail: ++c.fail; break;
      case Outcome::error: ++c.error; break;
      case Outcome::skipped: ++c.skipped; break;
      case Outcome::mistrusted: ++c.mistrusted; break;
    }
  }
  return c;
}

}  // namespace fb
