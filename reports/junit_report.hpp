// JUnit XML for CI systems: one testsuite per family, one testcase per case, point and backend.
// fail and mistrusted are <failure>, error is <error>, skipped is <skipped>; the message is the
// first failing check and the body holds every check and the repro line.
#pragma once

#include <string>
#include <vector>

#include "reports/run_metadata.hpp"

namespace fb {

std::string junit_xml(const RunMetadata& meta, const std::vector<CaseResult>& results);
void write_junit_report(const std::string& path, const RunMetadata& meta, const std::vector<CaseResult>& results);

}  // namespace fb
