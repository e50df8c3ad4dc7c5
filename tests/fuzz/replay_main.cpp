// A main for the fuzz targets outside libFuzzer: runs LLVMFuzzerTestOneInput once on every file
// named on the command line, or in a folder named there (in name order). Normal builds use it to
// replay each target's seed corpus and regression inputs as a test, so the targets keep compiling
// with every compiler and the inputs keep passing under ASan+UBSan.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; i++) {
    const fs::path p = argv[i];
    if (fs::is_directory(p)) {
      std::vector<fs::path> in_dir;
      for (const auto& e : fs::directory_iterator(p)) {
        if (e.is_regular_file()) in_dir.push_back(e.path());
      }
      std::sort(in_dir.begin(), in_dir.end());
      inputs.insert(inputs.end(), in_dir.begin(), in_dir.end());
    } else {
      inputs.push_back(p);
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s FILE|FOLDER... (no inputs found)\n", argv[0]);
    return 2;
  }
  for (const auto& p : inputs) {
    std::ifstream in(p, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", p.c_str());
      return 2;
    }
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::printf("%s (%zu bytes)\n", p.c_str(), data.size());
    std::fflush(stdout);  // the last name printed is the input that crashed, if one does
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  std::printf("%zu inputs passed\n", inputs.size());
  return 0;
}
