// A markdown summary of a run (for pull requests and run logs): provenance, one table row per case,
// and the failing checks with their repro commands.
#pragma once

#include <string>
#include <vector>

#include "reports/run_metadata.hpp"

namespace fb {

std::string markdown_report(const RunMetadata& meta, const std::vector<CaseResult>& results);
void write_markdown_report(const std::string& path, const RunMetadata& meta, const std::vector<CaseResult>& results);

}  // namespace fb
