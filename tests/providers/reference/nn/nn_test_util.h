// Running one operator on the reference provider in unit tests of nn/ and quant/.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "recur/recur.h"
#include "tests/support/model_builder.h"

namespace recur::testing {

using AttrFn = std::function<void(onnx::NodeProto&)>;

// A model with one node named "node": each named input is a graph input whose dimensions are
// unknown (so that only the kernel, not load-time inference, can reject a shape); an input
// named "" is omitted. Outputs are y0, y1, ... with the given dtypes.
inline Session single_op_session(const std::string& op, int opset,
                                 const std::vector<std::pair<std::string, Tensor>>& inputs,
                                 const AttrFn& attrs, const std::vector<DType>& out_dtypes) {
  ModelBuilder m(opset);
  std::vector<std::string> names;
  for (const auto& [name, t] : inputs) {
    names.push_back(name);
    if (name.empty()) continue;
    m.input(name, t.dtype(), std::vector<int64_t>(t.shape().size(), -1));
  }
  std::vector<std::string> outs;
  for (size_t i = 0; i < out_dtypes.size(); ++i) {
    outs.push_back("y" + std::to_string(i));
    m.output(outs.back(), out_dtypes[i]);
  }
  onnx::NodeProto& n = m.node(op, names, outs, "node");
  if (attrs) attrs(n);
  const std::string bytes = m.bytes();
  return Session::from_bytes(bytes.data(), bytes.size(), SessionOptions().providers({"reference"}));
}

// Builds and runs the model; throws recur::Error like the public API.
inline Outputs run_op(const std::string& op, int opset,
                      const std::vector<std::pair<std::string, Tensor>>& inputs,
                      const AttrFn& attrs = {}, std::vector<DType> out_dtypes = {}) {
  if (out_dtypes.empty()) out_dtypes.push_back(inputs.at(0).second.dtype());
  Session s = single_op_session(op, opset, inputs, attrs, out_dtypes);
  Feeds feeds;
  for (const auto& [name, t] : inputs)
    if (!name.empty()) feeds.emplace_back(name, t);
  return s.run(feeds);
}

template <class T>
std::vector<T> values(const Tensor& t) {
  const T* p = t.data<T>();
  return std::vector<T>(p, p + t.numel());
}

}  // namespace recur::testing
