// Where the engine looks for librecur_cuda.so, how it tells a missing module from a missing
// dependency, and that a CUDA build finds the module it built.
#include "runtime/engine/session/cuda_module.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "recur/session.h"
#include "tests/support/recur_run_cli.h"

namespace recur {
namespace {

// glibc's dlerror() texts. A present module whose libcudnn is missing reads like a missing
// module but for the name: it must be reported as the dependency error, not as "not found".
TEST(CudaModuleDlerror, TheModuleItselfMissingIsNotFound) {
  EXPECT_TRUE(dlopen_error_is_file_not_found(
      "librecur_cuda.so: cannot open shared object file: No such file or directory",
      "librecur_cuda.so"));
}

TEST(CudaModuleDlerror, AMissingDependencyIsNotNotFound) {
  EXPECT_FALSE(dlopen_error_is_file_not_found(
      "libcudnn.so.9: cannot open shared object file: No such file or directory",
      "librecur_cuda.so"));
  // A dependency whose name ends in the module's name is still another file.
  EXPECT_FALSE(dlopen_error_is_file_not_found(
      "libold_librecur_cuda.so: cannot open shared object file: No such file or directory",
      "librecur_cuda.so"));
}

TEST(CudaModuleDlerror, OtherErrorsAreNotNotFound) {
  EXPECT_FALSE(dlopen_error_is_file_not_found("librecur_cuda.so: undefined symbol: cudnnCreate",
                                              "librecur_cuda.so"));
  EXPECT_FALSE(dlopen_error_is_file_not_found("librecur_cuda.so: wrong ELF class: ELFCLASS32",
                                              "librecur_cuda.so"));
}

#if RECUR_HAVE_CUDA

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

// The same through the loader's search (RECUR_CUDA_MODULE a bare file name): a module that is
// found but needs a missing library is reported with dlopen's reason, naming that library.
TEST(CudaModule, AMissingDependencyIsReportedAsSuch) {
  const testing::RunResult r =
      testing::run_cli("--list-providers", "RECUR_CUDA_MODULE=librecur_cuda.so LD_LIBRARY_PATH=" +
                                               std::string(RECUR_FAKE_CUDA_MODULE_DIR) + " ");
  EXPECT_NE(r.output.find("dlopen failed: librecur_test_absent_dep.so: cannot open shared object"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("not found"), std::string::npos) << r.output;
}

#endif  // RECUR_HAVE_CUDA

}  // namespace
}  // namespace recur
