// Replays a fuzz corpus through a libFuzzer target without libFuzzer, so any
// compiler builds it and ctest runs it: every regular file under the given
// files or directories goes once through LLVMFuzzerTestOneInput. A crash,
// an abort or a hang (ctest's timeout) fails the run; so does an empty
// corpus, since a replay of nothing proves nothing.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

std::vector<std::filesystem::path> inputs(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path arg(argv[i]);
    if (std::filesystem::is_regular_file(arg)) files.push_back(arg);
    if (!std::filesystem::is_directory(arg)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(arg)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files = inputs(argc, argv);
  if (files.empty()) {
    std::cerr << "FAIL no corpus files under the given paths\n";
    return 1;
  }
  for (const auto& file : files) {
    // Named first, so that a crash points at its input.
    std::cerr << file.string() << std::endl;
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::cout << "ok replayed " << files.size() << " inputs\n";
  return 0;
}
