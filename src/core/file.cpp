#include "core/file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace fluxop {

namespace fs = std::filesystem;

std::optional<std::string> read_file_if_exists(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  if (!file.flush()) throw Error(path + ": cannot write");
}

void write_file_atomically(const std::string& path, const std::string& text) {
  std::error_code error;
  fs::create_directories(fs::path(path).parent_path(), error);
  std::string temporary = path + ".tmp" + std::to_string(getpid());
  try {
    write_file(temporary, text);
  } catch (const Error&) {
    fs::remove(temporary, error);
    throw;
  }
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    throw Error(path + ": cannot write: " + error.message());
  }
}

std::string utc_rfc3339(std::time_t seconds) {
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace fluxop
