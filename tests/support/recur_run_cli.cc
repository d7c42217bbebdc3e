#include "tests/support/recur_run_cli.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>

#include "runtime/engine/onnx/tensor_proto.h"
#include "tests/support/model_builder.h"

namespace recur::testing {

RunResult run_cli(const std::string& args, const std::string& prefix) {
  const std::string cmd = prefix + std::string(RECUR_RUN_PATH) + " " + args + " 2>&1";
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

void make_test_dir(const std::filesystem::path& dir, const std::vector<float>& want) {
  ModelBuilder m;
  m.input("x", DType::kFloat32, {3});
  m.output("y", DType::kFloat32);
  m.node("Add", {"x", "x"}, {"y"});
  m.save(dir);
  std::filesystem::create_directories(dir / "test_data_set_0");
  ASSERT_TRUE(write_tensor_pb(floats({3}, {1, 2, 3}), "x",
                              (dir / "test_data_set_0" / "input_0.pb").string())
                  .ok());
  ASSERT_TRUE(
      write_tensor_pb(floats({3}, want), "y", (dir / "test_data_set_0" / "output_0.pb").string())
          .ok());
}

}  // namespace recur::testing
