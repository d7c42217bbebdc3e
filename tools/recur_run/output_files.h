// --output-dir: each output as a .npy file, never through a symbolic link, never over an
// existing file without --overwrite, and never half-written.
#pragma once

#include <ostream>
#include <string>

#include "recur/session.h"

namespace recur::tools {

// An output's file name: every byte other than A-Z a-z 0-9 . _ - becomes %XX (upper-case hex),
// then ".npy". Injective, since '%' itself is escaped: "a/b", "a_b" and "a:b" stay apart.
std::string output_file_name(const std::string& output_name);

// Writes every tensor output of `outs` into `dir` (created if missing). Everything that can
// be checked is checked before the first file is written: two outputs with one file name, an
// existing file without `overwrite`, a symbolic link or a non-regular file in an output's
// place (refused even with `overwrite`: replacing a link the user planted would be as
// surprising as following it), or `dir` itself being a symbolic link. Each file is written to
// a temporary name in `dir` and renamed into place, so a failed write leaves nothing behind.
// Throws recur::Error naming the file; logs "wrote PATH" and skipped sequences to `log`.
void write_outputs(const Outputs& outs, const std::string& dir, bool overwrite, std::ostream& log);

}  // namespace recur::tools
