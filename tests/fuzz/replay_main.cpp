// Replays saved fuzz inputs through a target's LLVMFuzzerTestOneInput without libFuzzer, so the
// corpus (tests/fuzz/corpus/<target>.tar.gz, unpacked into the build tree at configure time)
// runs as an ordinary test with any compiler, and under ASan+UBSan in the sanitizer job of
// scripts/test.sh. A target reports a broken property by aborting, which fails the test like a
// sanitizer report does.
// usage: fuzz_replay_<target> PATH...   (files, or directories: their regular files, sorted)

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path path(argv[i]);
    if (fs::is_directory(path)) {
      for (const auto& entry : fs::directory_iterator(path))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else {
      inputs.push_back(path);
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "no inputs to replay (give files or directories)\n");
    return 2;
  }
  std::size_t bytes = 0;
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 2;
    }
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes += data.size();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  }
  std::printf("%zu inputs (%zu bytes) replayed\n", inputs.size(), bytes);
  return 0;
}
