// One-node ONNX models for testing the tensor/ kernels through the public API.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "runtime/engine/onnx/tensor_proto.h"
#include "tests/support/model_builder.h"

namespace recur::tensor_test {

// The node is named 'n'; its inputs and outputs are added in call order.
class NodeModel {
 public:
  NodeModel(const std::string& op, int opset) : mb_(opset) { mb_.node(op, {}, {}, "n"); }

  // A graph input the node reads. Negative dims become symbols "d0", "d1", ...
  NodeModel& input(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
    std::vector<std::string> symbols;
    for (size_t i = 0; i < dims.size(); ++i) {
      symbols.emplace_back("d");
      symbols.back() += std::to_string(i);  // not "d" + ...: GCC 12 warns falsely about that
    }
    mb_.input(name, dtype, dims, symbols);
    node().add_input(name);
    return *this;
  }
  // A graph input of the tensor's dtype and shape.
  NodeModel& input(const std::string& name, const Tensor& like) {
    return input(name, like.dtype(), like.shape());
  }
  // An initializer the node reads: a constant, visible to shape inference.
  NodeModel& constant(const std::string& name, const Tensor& value) {
    mb_.initializer(name, value);
    node().add_input(name);
    return *this;
  }
  NodeModel& no_input() {
    node().add_input("");
    return *this;
  }
  // A graph output with no declared type: what the session reports comes from shape inference.
  NodeModel& output(const std::string& name) {
    node().add_output(name);
    if (!name.empty()) mb_.graph().add_output()->set_name(name);
    return *this;
  }

  template <class T>
  NodeModel& attr(const std::string& name, const T& v) {
    testing::set_attr(node(), name, v);
    return *this;
  }
  NodeModel& attr(const std::string& name, const Tensor& v) {
    auto* a = node().add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::TENSOR);
    tensor_to_proto(v, name, a->mutable_t()).throw_if_error();
    return *this;
  }

  Session session() const {
    const std::string bytes = mb_.bytes();
    return Session::from_bytes(bytes.data(), bytes.size(),
                               SessionOptions{}.providers({"reference"}));
  }
  Outputs run(const Feeds& feeds) const { return session().run(feeds); }

 private:
  onnx::NodeProto& node() { return *mb_.graph().mutable_node(0); }

  testing::ModelBuilder mb_;
};

template <class T>
std::vector<T> values_of(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

// The message of the recur::Error that f throws, or "" (with a test failure) if it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a recur::Error";
  return "";
}

}  // namespace recur::tensor_test
