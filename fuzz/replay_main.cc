// Runs a fuzz harness's LLVMFuzzerTestOneInput over files, as libFuzzer does when given files,
// so that regression and seed files replay in a build without clang. Arguments are files or
// folders (searched recursively, in sorted order); --match=SUFFIX keeps only files whose name
// ends in SUFFIX (several may be given). A folder that does not exist is skipped with a note:
// the ONNX test data is optional. README and .md files are notes, not inputs.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

bool wanted(const fs::path& p, const std::vector<std::string>& suffixes) {
  const std::string name = p.filename().string();
  if (name.rfind("README", 0) == 0 || p.extension() == ".md") return false;
  if (suffixes.empty()) return true;
  return std::any_of(suffixes.begin(), suffixes.end(), [&](const std::string& s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> suffixes;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--match=", 0) == 0) {
      suffixes.push_back(arg.substr(8));
      continue;
    }
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> found;
      for (const auto& e : fs::recursive_directory_iterator(arg, ec)) {
        if (e.is_regular_file()) found.push_back(e.path());
      }
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::is_regular_file(arg, ec)) {
      files.emplace_back(arg);
    } else {
      std::printf("replay: skipping '%s' (not there)\n", arg.c_str());
    }
  }
  size_t ran = 0;
  for (const fs::path& p : files) {
    if (!wanted(p, suffixes)) continue;
    std::ifstream in(p, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    if (!in.good() && !in.eof()) {
      std::printf("replay: cannot read '%s'\n", p.c_str());
      return 1;
    }
    // Printed before the run, so that a crash's last line names the file.
    std::printf("replay: %s\n", p.c_str());
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    ++ran;
  }
  std::printf("replay: %zu files, no crash\n", ran);
  return 0;
}
