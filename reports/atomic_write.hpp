// Writes a file so that readers see either the old file or the complete new one, never half:
// the text goes to a temporary file beside the target, is flushed to disk, then renamed over it.
#pragma once

#include <string>

namespace fb {

// Throws InputError (unwritable path) with the path and the system's reason.
void write_file_atomically(const std::string& path, const std::string& contents);

// Checks, before a long run, that a report can be written at `path` (its folder exists and takes
// a new file); throws the same InputError the write would.
void ensure_writable(const std::string& path);

}  // namespace fb
