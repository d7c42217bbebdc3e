// The single-node test harness every provider's kernel tests use, in the manner of ONNX
// Runtime's OpTester: describe one node (op, domain, opset, attributes, inputs given as graph
// inputs or constants), the outputs or the error it must give, and run it on every provider
// that can: reference, onednn when built, and the CUDA providers only when a GPU is present.
// Each provider other than reference runs the node only where it claims it; one that declines
// is "not claimed", which a test may require against (require_claim) or allow (the default).
//
//   OpTester("Add", 14)
//       .input(tensor<float>({2}, {1, 2}))
//       .constant(tensor<float>({2}, {3, 4}))
//       .expect<float>({2}, {4, 6})
//       .check();
//
// run() is for tests that inspect outputs themselves: it returns the reference provider's
// outputs (or throws its recur::Error) after checking that every other provider claiming the
// node gives the same outputs, or an error of the same code.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur::test {

class OpTester {
 public:
  using AttrFn = std::function<void(onnx::NodeProto&)>;

  // The node is named "node", so errors read "node 'node' (Op)".
  OpTester(std::string op, int opset, std::string domain = "");

  // A graph input, fed when the node runs; unnamed inputs are x0, x1, ... by position.
  OpTester& input(Tensor t);
  OpTester& input(const std::string& name, Tensor t);
  // A graph input declared but not given: run(feeds) feeds it. Negative dims become the
  // symbols d0, d1, ... by position (shared between inputs, so they read as equal).
  OpTester& input(const std::string& name, DType dtype, const std::vector<int64_t>& dims);
  // Named graph inputs in order; an empty name is an omitted optional input.
  OpTester& inputs(const std::vector<std::pair<std::string, Tensor>>& named);
  // An initializer: a constant the kernel (and load-time shape inference) sees.
  OpTester& constant(Tensor t);
  OpTester& constant(const std::string& name, Tensor t);
  // An omitted optional input ("").
  OpTester& omitted();
  // Declares graph inputs with unknown dims, so that only the kernel, not load-time shape
  // inference, can reject a shape.
  OpTester& dynamic_shapes();

  // Outputs y0 .. y<n-1> with no declared type (what the session reports is inferred).
  OpTester& outputs(int n);
  // One more output; an empty name is an omitted optional output.
  OpTester& output(const std::string& name, DType dtype = DType::kUndefined);
  // Declared dtypes of outputs y0, y1, ...
  OpTester& output_dtypes(const std::vector<DType>& dtypes);

  template <class T>
  OpTester& attr(const std::string& name, const T& v) {
    testing::set_attr(node(), name, v);
    return *this;
  }
  OpTester& attr(const std::string& name, const Tensor& v);
  // Anything the typed setters do not cover (graphs, sparse tensors, bad attribute types).
  OpTester& attrs(const AttrFn& fn);

  // The next expected output, in output order. Floats match within tol relative to
  // max(1, |want|); integers, bools and strings exactly; NaN matches NaN.
  template <class T>
  OpTester& expect(const Shape& shape, const std::vector<T>& values, double tol = 1e-6) {
    expected_.push_back({Tensor::from_vector<T>(shape, values), tol});
    return *this;
  }
  // The next expected output as a value (a sequence or a map, say).
  OpTester& expect(Tensor value, double tol = 1e-6) {
    expected_.push_back({std::move(value), tol});
    return *this;
  }
  // The node must fail with `code`, the message containing `fragment`.
  OpTester& expect_error(ErrorCode code, std::string fragment);
  // Tolerance of the comparison of other providers' outputs with reference's.
  OpTester& parity_tolerance(double tol);

  // Providers to try, in order; the default is every one this build and machine can run.
  OpTester& providers(std::vector<std::string> names);
  // Fails the test if `provider` (when it can run here) declines the node.
  OpTester& require_claim(const std::string& provider);

  // Runs on every provider and checks the expectations; failures name the provider.
  void check() const;
  // Runs on every provider with `feeds` instead of the given inputs' values.
  Outputs run(const Feeds& feeds) const;
  Outputs run() const { return run(feeds()); }

  // The reference provider's session, for tests of what load reports (inputs(), outputs()).
  Session session(const std::string& provider = "reference") const;
  std::string bytes() const;
  Feeds feeds() const;

  // The providers this build and machine can run, reference first.
  static std::vector<std::string> runnable_providers();

 private:
  struct In {
    std::string name;
    Tensor value;
    bool constant;
  };
  struct Expected {
    Tensor value;
    double tol;
  };
  onnx::NodeProto& node() { return *mb_.graph().mutable_node(0); }
  OpTester& add_input(std::string name, Tensor t, bool constant);
  // The run on one provider other than reference: nullopt when the provider declines the node.
  std::optional<Outputs> run_on(const std::string& provider, const Feeds& feeds) const;
  std::vector<std::string> provider_list() const;

  testing::ModelBuilder mb_;
  std::vector<In> inputs_;
  bool dynamic_ = false;
  std::vector<Expected> expected_;
  std::optional<std::pair<ErrorCode, std::string>> error_;
  double parity_tol_ = 1e-4;
  std::vector<std::string> providers_;
  std::vector<std::string> must_claim_;
};

// Empty when `got` matches `want` within `tol` (see OpTester::expect), else what differs.
std::string compare_tensors(const Tensor& got, const Tensor& want, double tol);

template <class T>
Tensor tensor(Shape shape, std::vector<T> values) {
  return Tensor::from_vector<T>(std::move(shape), values);
}

template <class T>
std::vector<T> values(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

// Checks dtype, shape and values as OpTester::expect does.
template <class T>
void expect_tensor(const Tensor& got, const Shape& shape, const std::vector<T>& want,
                   double tol = 1e-6) {
  const std::string diff = compare_tensors(got, Tensor::from_vector<T>(shape, want), tol);
  EXPECT_TRUE(diff.empty()) << diff;
}

// Runs `t` on every provider and expects a recur::Error with `code` whose message contains
// `part`.
inline void expect_error(OpTester t, ErrorCode code, const std::string& part) {
  t.expect_error(code, part).check();
}

// Shorthand for a node whose inputs are all named graph inputs of unknown dims (an empty name
// is an omitted input), with outputs of the given dtypes (by default the first input's).
Outputs run_op(const std::string& op, int opset,
               const std::vector<std::pair<std::string, Tensor>>& inputs,
               const OpTester::AttrFn& attrs = {}, std::vector<DType> out_dtypes = {});

// The message of the recur::Error that f throws, or "" (with a test failure) if it throws none.
std::string error_of(const std::function<void()>& f);

using testing::expect_error;
using testing::floats;
using testing::set_attr;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace recur::test
