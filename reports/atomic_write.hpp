// Writing a report where the user pointed, without ever destroying what the path names.
//
// fusebench runs in CI as root, so a report path may name anything. What each kind gets:
//   - "-", /dev/stdout, /dev/fd/1, /proc/self/fd/1: written to standard output as it is (no temp
//     file; a redirected stdout keeps the console text before the report); /dev/stderr likewise.
//   - a character device (/dev/null, a terminal) or a FIFO: opened and written through; it is never
//     replaced, renamed over or deleted. A FIFO that no process reads is an error, not a hang.
//   - a symbolic link: FOLLOWED to its final target, which is written by these rules (the link
//     stays a link); a link to a missing file is refused, as it could point anywhere.
//   - a regular file or a new name: atomically: the text goes to a temporary file beside the
//     target (".NAME.fusebench-tmp.HOST.PID"), is flushed to disk, then renamed over it, so readers
//     (and a run killed mid-write) see either the old file or the complete new one.
//   - a directory, a block device or a socket: refused.
// Every refusal and failure is an InputError naming the path and why (exit 2).
//
// A run killed between creating its temporary file and renaming it leaves that file behind. Each
// write removes such files for the same target when it can prove they are fusebench's and stale:
// the name's host is this host, no process with the name's PID is alive, the file is a regular file
// owned by this user.
#pragma once

#include <string>

namespace fb {

struct OutputTarget {
  enum class Kind { standard_output, standard_error, special, file };
  Kind kind = Kind::file;
  std::string path;      // where the bytes go: a symlink's final target, else the path as given
  bool exists = false;   // for Kind::file
  std::string identity;  // equal for two paths naming one destination ("dev:inode", or the absolute path)
};

// What `path` names and how it would be written; InputError for a refused kind (see above).
OutputTarget classify_output(const std::string& path);

// Throws InputError (unwritable or refused path) with the path and the system's reason.
void write_file_atomically(const std::string& path, const std::string& contents);

// Checks, before a long run, that a report can be written at `path` (its folder exists and takes
// a new file, or it is a writable special file); throws the same InputError the write would.
void ensure_writable(const std::string& path);

// Removes stale temporary files of fusebench writes to `target` (see above); returns how many.
int remove_stale_temp_files(const std::string& target);

}  // namespace fb
