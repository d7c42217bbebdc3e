// One-node ONNX models for testing the tensor/ kernels through the public API.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <functional>
#include <string>
#include <vector>

#include "recur/recur.h"
#include "runtime/onnx/tensor_proto.h"

namespace recur::test {

class NodeModel {
 public:
  NodeModel(const std::string& op, int opset) {
    model_.set_ir_version(8);
    auto* imp = model_.add_opset_import();
    imp->set_domain("");
    imp->set_version(opset);
    graph_ = model_.mutable_graph();
    graph_->set_name("test");
    node_ = graph_->add_node();
    node_->set_op_type(op);
    node_->set_name("n");
  }

  // A graph input the node reads. Negative dims become symbols "d0", "d1", ...
  NodeModel& input(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
    auto* vi = graph_->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(static_cast<int>(dtype));
    auto* shape = tt->mutable_shape();
    for (size_t i = 0; i < dims.size(); ++i) {
      auto* d = shape->add_dim();
      if (dims[i] >= 0) {
        d->set_dim_value(dims[i]);
      } else {
        d->set_dim_param("d" + std::to_string(i));
      }
    }
    node_->add_input(name);
    return *this;
  }
  // A graph input of the tensor's dtype and shape.
  NodeModel& input(const std::string& name, const Tensor& like) {
    return input(name, like.dtype(), like.shape());
  }
  // An initializer the node reads: a constant, visible to shape inference.
  NodeModel& constant(const std::string& name, const Tensor& value) {
    tensor_to_proto(value, name, graph_->add_initializer()).throw_if_error();
    node_->add_input(name);
    return *this;
  }
  NodeModel& no_input() {
    node_->add_input("");
    return *this;
  }
  NodeModel& output(const std::string& name) {
    node_->add_output(name);
    if (!name.empty()) graph_->add_output()->set_name(name);
    return *this;
  }

  NodeModel& attr(const std::string& name, int64_t v) {
    auto* a = add_attr(name, onnx::AttributeProto::INT);
    a->set_i(v);
    return *this;
  }
  NodeModel& attr(const std::string& name, const std::vector<int64_t>& v) {
    auto* a = add_attr(name, onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
    return *this;
  }
  NodeModel& attr(const std::string& name, float v) {
    auto* a = add_attr(name, onnx::AttributeProto::FLOAT);
    a->set_f(v);
    return *this;
  }
  NodeModel& attr(const std::string& name, const std::string& v) {
    auto* a = add_attr(name, onnx::AttributeProto::STRING);
    a->set_s(v);
    return *this;
  }
  NodeModel& attr(const std::string& name, const Tensor& v) {
    auto* a = add_attr(name, onnx::AttributeProto::TENSOR);
    tensor_to_proto(v, name, a->mutable_t()).throw_if_error();
    return *this;
  }

  Session session() const {
    std::string bytes;
    model_.SerializeToString(&bytes);
    return Session::from_bytes(bytes.data(), bytes.size(),
                               SessionOptions{}.providers({"reference"}));
  }
  Outputs run(const Feeds& feeds) const { return session().run(feeds); }

 private:
  onnx::AttributeProto* add_attr(const std::string& name, onnx::AttributeProto::AttributeType t) {
    auto* a = node_->add_attribute();
    a->set_name(name);
    a->set_type(t);
    return a;
  }

  onnx::ModelProto model_;
  onnx::GraphProto* graph_;
  onnx::NodeProto* node_;
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

}  // namespace recur::test
