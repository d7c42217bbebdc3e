// Single-node ONNX models for kernel unit tests: build the model in memory (with
// tests/support/model_builder.h), run it on the reference provider, and compare outputs with
// hard-coded expected values.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "recur/recur.h"
#include "tests/support/expect_error.h"
#include "tests/support/model_builder.h"

namespace recur::test {

class NodeModel {
 public:
  NodeModel(std::string op, int opset) : op_(std::move(op)), opset_(opset) {}

  // A graph input, fed when the model runs.
  NodeModel& input(Tensor t) { return add_input(std::move(t), false); }
  // An initializer: a constant the kernel sees at compile time.
  NodeModel& constant(Tensor t) { return add_input(std::move(t), true); }
  // An omitted optional input ("").
  NodeModel& omitted() {
    inputs_.push_back({"", Tensor(), false});
    return *this;
  }
  // Declares the graph inputs with symbolic dimensions, so that only the kernel sees shapes.
  NodeModel& dynamic_shapes() {
    dynamic_ = true;
    return *this;
  }
  NodeModel& outputs(int n) {
    num_outputs_ = n;
    return *this;
  }

  NodeModel& attr(const std::string& name, int64_t v) {
    auto* a = new_attr(name, onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  NodeModel& attr(const std::string& name, float v) {
    auto* a = new_attr(name, onnx::AttributeProto::FLOAT);
    a->set_f(v);
    return *this;
  }
  NodeModel& attr(const std::string& name, const std::string& v) {
    auto* a = new_attr(name, onnx::AttributeProto::STRING);
    a->set_s(v);
    return *this;
  }
  NodeModel& attr(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = new_attr(name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }

  std::string bytes() const {
    testing::ModelBuilder b(opset_);
    std::vector<std::string> names, outs;
    for (const In& in : inputs_) {
      names.push_back(in.name);
      if (in.name.empty()) continue;
      if (in.constant) {
        b.initializer(in.name, in.value);
        continue;
      }
      std::vector<std::string> symbols;
      std::vector<int64_t> dims = in.value.shape();
      if (dynamic_) {
        for (size_t d = 0; d < dims.size(); ++d) {
          symbols.push_back(in.name + "_" + std::to_string(d));
          dims[d] = -1;
        }
      }
      b.input(in.name, in.value.dtype(), dims, symbols);
    }
    for (int i = 0; i < num_outputs_; ++i) {
      outs.push_back(numbered('y', i));
      b.output(outs.back(), DType::kUndefined);
    }
    onnx::NodeProto& n = b.node(op_, names, outs, "node");
    *n.mutable_attribute() = attrs_.attribute();
    return b.bytes();
  }

  Session session() const {
    const std::string b = bytes();
    return Session::from_bytes(b.data(), b.size(), SessionOptions().providers({"reference"}));
  }

  // Runs the node; throws recur::Error as Session does.
  std::vector<Tensor> run() const {
    Session s = session();
    Feeds feeds;
    for (const auto& in : inputs_)
      if (!in.constant && !in.name.empty()) feeds.emplace_back(in.name, in.value);
    return s.run(feeds).tensors();
  }

 private:
  struct In {
    std::string name;
    Tensor value;
    bool constant;
  };
  // "x3"; built by append, which GCC 12's -Wrestrict does not misreport as "x" + string does.
  static std::string numbered(char prefix, int i) {
    std::string s(1, prefix);
    s += std::to_string(i);
    return s;
  }
  NodeModel& add_input(Tensor t, bool constant) {
    const std::string name = numbered('x', static_cast<int>(inputs_.size()));
    inputs_.push_back({name, std::move(t), constant});
    return *this;
  }
  onnx::AttributeProto* new_attr(const std::string& name, onnx::AttributeProto::AttributeType t) {
    onnx::AttributeProto* a = attrs_.add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  }

  std::string op_;
  int opset_;
  onnx::NodeProto attrs_;  // holds the attributes
  std::vector<In> inputs_;
  int num_outputs_ = 1;
  bool dynamic_ = false;
};

template <class T>
Tensor tensor(Shape shape, std::vector<T> values) {
  return Tensor::from_vector<T>(std::move(shape), values);
}

inline double as_double(double v) { return v; }
template <class T>
double as_double(T v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(v);
  } else {
    return static_cast<double>(v);
  }
}

// Checks dtype, shape and values: exact for integers and bool, |got - want| <= tol (relative
// to max(1, |want|)) for floats; NaN must match NaN, infinities must be equal.
template <class T>
void expect_tensor(const Tensor& got, const Shape& shape, const std::vector<T>& want,
                   double tol = 1e-6) {
  ASSERT_EQ(got.dtype(), dtype_of_v<T>) << dtype_name(got.dtype());
  ASSERT_EQ(got.shape(), shape) << shape_to_string(got.shape());
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size());
  const T* p = got.data<T>();
  for (size_t i = 0; i < want.size(); ++i) {
    const double g = as_double(p[i]), w = as_double(want[i]);
    if constexpr (std::is_integral_v<T>) {
      EXPECT_EQ(p[i], want[i]) << "element " << i;
    } else if (std::isnan(w) || std::isinf(w)) {
      EXPECT_TRUE(std::isnan(w) ? std::isnan(g) : g == w)
          << "element " << i << ": " << g << ", expected " << w;
    } else {
      EXPECT_NEAR(g, w, tol * std::max(1.0, std::fabs(w))) << "element " << i;
    }
  }
}

// Runs `m` and expects a recur::Error with `code` whose message contains `part`.
inline void expect_error(const NodeModel& m, ErrorCode code, const std::string& part) {
  testing::expect_error([&] { m.run(); }, code, {part});
}

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace recur::test
