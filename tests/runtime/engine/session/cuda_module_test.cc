// Where the engine looks for librecur_cuda.so, and that a CUDA build finds the one it built.
#if RECUR_HAVE_CUDA
#include "runtime/engine/session/cuda_module.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "recur/session.h"

namespace recur {
namespace {

class CudaModuleEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = getenv("RECUR_CUDA_MODULE")) {
      saved_ = v;
      had_ = true;
    }
  }
  void TearDown() override {
    if (had_) {
      setenv("RECUR_CUDA_MODULE", saved_.c_str(), 1);
    } else {
      unsetenv("RECUR_CUDA_MODULE");
    }
  }
  std::string saved_;
  bool had_ = false;
};

TEST_F(CudaModuleEnv, TheVariableNamesTheOnlyCandidate) {
  setenv("RECUR_CUDA_MODULE", "/opt/x/librecur_cuda.so", 1);
  EXPECT_EQ(cuda_module_candidates(), std::vector<std::string>{"/opt/x/librecur_cuda.so"});
}

TEST_F(CudaModuleEnv, ByDefaultBesideTheProgramThenItsLibFolderThenTheLoadersSearch) {
  unsetenv("RECUR_CUDA_MODULE");
  // This test links the engine statically, so "the binary holding the engine" is the program.
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe");
  const std::vector<std::string> want = {
      (exe.parent_path() / "librecur_cuda.so").string(),
      (exe.parent_path().parent_path() / "lib" / "librecur_cuda.so").string(), "librecur_cuda.so"};
  EXPECT_EQ(cuda_module_candidates(), want);
}

// The build puts the module in build/lib, which the test (build/tests) finds as ../lib: the
// GPU providers are then listed with the module's own verdict (on a machine without a GPU, no
// driver or no device), never with a loading error.
TEST(CudaModule, TheBuiltModuleIsFoundAndOpened) {
  if (getenv("RECUR_CUDA_MODULE") != nullptr) GTEST_SKIP() << "RECUR_CUDA_MODULE is set";
  int seen = 0;
  for (const ProviderInfo& p : list_providers()) {
    if (p.name != "cudnn" && p.name != "cuda-generic") continue;
    ++seen;
    EXPECT_EQ(p.reason.find("librecur_cuda.so"), std::string::npos) << p.name << ": " << p.reason;
    EXPECT_EQ(p.reason.find("dlopen"), std::string::npos) << p.name << ": " << p.reason;
  }
  EXPECT_EQ(seen, 2);
}

}  // namespace
}  // namespace recur
#endif  // RECUR_HAVE_CUDA
