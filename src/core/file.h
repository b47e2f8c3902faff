// Whole-file reads and writes for caches and scratch files.
#pragma once

#include <ctime>
#include <optional>
#include <string>

namespace fluxop {

// The file's bytes; nullopt when it cannot be opened.
std::optional<std::string> read_file_if_exists(const std::string& path);

// Writes (truncating) `text`; throws fluxop::Error naming the path on failure.
void write_file(const std::string& path, const std::string& text);

// Writes `text` next to `path` and renames it into place (creating parent
// directories), so readers see the old or the new content, never a part.
void write_file_atomically(const std::string& path, const std::string& text);

// "2026-11-22T07:37:16Z".
std::string utc_rfc3339(std::time_t seconds);

}  // namespace fluxop
