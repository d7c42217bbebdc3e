// Running a model in ONNX backend-test layout (model.onnx, test_data_set_*/input_K.pb and
// output_K.pb) and comparing with the expected outputs.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "recur/session.h"
#include "runtime/core/status.h"

namespace recur::tools {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// The agreed tolerance of a CPU precision against fp32 (docs/precision.md).
Tolerance precision_tolerance(SessionOptions::Precision p);

struct Comparison {
  bool match = true;
  double max_abs = 0.0;  // largest |got - want|
  double max_rel = 0.0;  // largest |got - want| / |want| over want != 0
  int64_t mismatches = 0;
  int64_t nonfinite = 0;  // elements where `got` or `want` is a NaN or infinite float
  std::string reason;     // first reason for a mismatch
};

// |got - want| <= atol + rtol * |want| elementwise; NaN matches NaN; integers and bools exact.
Comparison compare(const Tensor& got, const Tensor& want, const Tolerance& tol);

struct DataSet {
  std::string dir;
  std::vector<std::pair<std::string, Tensor>> inputs;   // name (may be empty) and value
  std::vector<std::pair<std::string, Tensor>> outputs;  // expected
};

// The data sets of a test folder, in numeric order. With a session, input_K.pb and
// output_K.pb are read as SequenceProto where the model declares a sequence there.
Result<std::vector<DataSet>> read_data_sets(const std::string& dir,
                                            const Session* session = nullptr);

// Feeds for `session` from a data set: by name where the file names an input, else by
// position among the inputs that have no default.
Result<Feeds> feeds_for(const Session& session, const DataSet& ds);

struct TestResult {
  enum class Outcome { kPass, kMismatch, kError };
  Outcome outcome = Outcome::kPass;
  std::string reason;  // first reason for a failure
};

// Runs every data set of `dir`. With `log`, prints each output's errors. Random operators draw
// with seed 0 unless `options` has a random_seed, so that a comparison repeats.
TestResult run_test_dir(const std::string& dir, const SessionOptions& options, const Tolerance& tol,
                        std::ostream* log);

}  // namespace recur::tools
