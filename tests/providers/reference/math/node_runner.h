// Single-node ONNX models for kernel unit tests: build the model in memory, run it on the
// reference provider, and compare outputs with hard-coded expected values.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "recur/recur.h"

namespace recur::test {

class NodeModel {
 public:
  NodeModel(std::string op, int opset) : opset_(opset) { node_.set_op_type(std::move(op)); }

  // A graph input, fed when the model runs.
  NodeModel& input(Tensor t) { return add_input(std::move(t), false); }
  // An initializer: a constant the kernel sees at compile time.
  NodeModel& constant(Tensor t) { return add_input(std::move(t), true); }
  // An omitted optional input ("").
  NodeModel& omitted() {
    node_.add_input("");
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
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(opset_);
    onnx::GraphProto* g = m.mutable_graph();
    g->set_name("test");
    onnx::NodeProto* n = g->add_node();
    *n = node_;
    n->set_name("node");
    for (int i = 0; i < num_outputs_; ++i) {
      const std::string name = numbered('y', i);
      n->add_output(name);
      g->add_output()->set_name(name);
    }
    for (size_t i = 0; i < inputs_.size(); ++i) {
      const Tensor& t = inputs_[i].value;
      const std::string& name = inputs_[i].name;
      if (inputs_[i].constant) {
        onnx::TensorProto* tp = g->add_initializer();
        tp->set_name(name);
        tp->set_data_type(static_cast<int32_t>(t.dtype()));
        for (int64_t d : t.shape()) tp->add_dims(d);
        if (t.nbytes() > 0) {
          tp->set_raw_data(std::string(static_cast<const char*>(t.raw_data()), t.nbytes()));
        }
      } else {
        onnx::ValueInfoProto* vi = g->add_input();
        vi->set_name(name);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(static_cast<int32_t>(t.dtype()));
        auto* shape = tt->mutable_shape();
        for (size_t d = 0; d < t.shape().size(); ++d) {
          auto* dim = shape->add_dim();
          if (dynamic_) {
            dim->set_dim_param(name + "_" + std::to_string(d));
          } else {
            dim->set_dim_value(t.shape()[d]);
          }
        }
      }
    }
    return m.SerializeAsString();
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
      if (!in.constant) feeds.emplace_back(in.name, in.value);
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
    const std::string name = numbered('x', node_.input_size());
    node_.add_input(name);
    inputs_.push_back({name, std::move(t), constant});
    return *this;
  }
  onnx::AttributeProto* new_attr(const std::string& name, onnx::AttributeProto::AttributeType t) {
    onnx::AttributeProto* a = node_.add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  }

  int opset_;
  onnx::NodeProto node_;
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
  try {
    m.run();
    ADD_FAILURE() << "expected an error containing '" << part << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace recur::test
