// The human view on stdout: one line per case and point, the failing check with its first mismatch
// and a repro command under each case that did not pass, and a one-line summary.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "reports/run_metadata.hpp"

namespace fb {

// One line per verified case (written as results arrive).
std::string verify_line(const CaseResult& r);
// Lines under a case that did not pass: reason and repro.
std::string failure_lines(const CaseResult& r);
// The bench table, after all cases.
std::string bench_table(const std::vector<CaseResult>& results, const RunMetadata& meta);
// "1.62x chain" for each pair claim the variant is the subject of, in that mode ("-" if none).
std::string ratio_text(const CaseResult& r, const std::string& variant, const std::string& mode);
// Copy bandwidth, the empty-kernel floor per mode, the matrix rate and the timer, a line each.
std::string environment_text(const BenchEnvironment& e);
std::string summary_line(const RunMetadata& meta, const std::vector<CaseResult>& results);

// Fixed-width table: column widths from the widest cell; numbers right-aligned.
std::string render_table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right_aligned);

}  // namespace fb
