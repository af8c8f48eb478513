//===- ReplayMain.cpp - run a fuzz target over files, without libFuzzer ---===//
//
// Builds without -DGACC_FUZZ=ON link the fuzz targets with this main
// instead of libFuzzer's: it runs each file named on the command line, and
// each file in each directory named, through LLVMFuzzerTestOneInput once.
// The regression inputs run in the normal suite this way; a finding aborts
// just as it does under libFuzzer.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static bool runInput(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", path.c_str());
    return false;
  }
  std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                          std::istreambuf_iterator<char>()};
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                         bytes.size());
  return true;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
    return 2;
  }
  size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code error;
    if (fs::is_directory(argv[i], error)) {
      std::vector<fs::path> files;
      for (const fs::directory_entry &entry : fs::directory_iterator(argv[i]))
        if (entry.is_regular_file())
          files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (const fs::path &file : files)
        inputs += runInput(file);
    } else if (runInput(argv[i])) {
      ++inputs;
    } else {
      return 1;
    }
  }
  if (inputs == 0) {
    std::fprintf(stderr, "%s: no inputs\n", argv[0]);
    return 1;
  }
  std::printf("ran %zu inputs\n", inputs);
  return 0;
}
