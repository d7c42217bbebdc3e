#include "tests/support/model_builder.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <stdexcept>

#include "runtime/engine/onnx/tensor_proto.h"

namespace recur::testing {

namespace fs = std::filesystem;

ModelBuilder::ModelBuilder(int opset, int64_t ir_version) {
  model_.set_ir_version(ir_version);
  model_.set_producer_name("recur-tests");
  auto* op = model_.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

ModelBuilder& ModelBuilder::opset(const std::string& domain, int version) {
  auto* op = model_.add_opset_import();
  op->set_domain(domain);
  op->set_version(version);
  return *this;
}

static void fill_type(onnx::ValueInfoProto* vi, DType dtype, const std::vector<int64_t>& dims,
                      const std::vector<std::string>& symbols, bool with_shape) {
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(dtype));
  if (!with_shape) return;
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); ++i) {
    auto* d = shape->add_dim();
    if (dims[i] >= 0) {
      d->set_dim_value(dims[i]);
    } else if (i < symbols.size() && !symbols[i].empty()) {
      d->set_dim_param(symbols[i]);
    }
  }
}

ModelBuilder& ModelBuilder::input(const std::string& name, DType dtype,
                                  const std::vector<int64_t>& dims,
                                  const std::vector<std::string>& symbols) {
  auto* vi = graph().add_input();
  vi->set_name(name);
  fill_type(vi, dtype, dims, symbols, true);
  return *this;
}

ModelBuilder& ModelBuilder::output(const std::string& name, DType dtype,
                                   const std::vector<int64_t>& dims, bool with_shape) {
  auto* vi = graph().add_output();
  vi->set_name(name);
  fill_type(vi, dtype, dims, {}, with_shape);
  return *this;
}

static void fill_map_type(onnx::TypeProto* tp, DType key, DType value) {
  auto* mt = tp->mutable_map_type();
  mt->set_key_type(static_cast<int32_t>(key));
  mt->mutable_value_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(value));
}

ModelBuilder& ModelBuilder::map_input(const std::string& name, DType key, DType value) {
  auto* vi = graph().add_input();
  vi->set_name(name);
  fill_map_type(vi->mutable_type(), key, value);
  return *this;
}

ModelBuilder& ModelBuilder::map_output(const std::string& name, DType key, DType value,
                                       bool in_sequence) {
  auto* vi = graph().add_output();
  vi->set_name(name);
  onnx::TypeProto* tp = vi->mutable_type();
  if (in_sequence) tp = tp->mutable_sequence_type()->mutable_elem_type();
  fill_map_type(tp, key, value);
  return *this;
}

ModelBuilder& ModelBuilder::initializer(const std::string& name, const Tensor& value) {
  auto* t = graph().add_initializer();
  Status st = tensor_to_proto(value, name, t);
  if (!st.ok()) throw std::runtime_error(st.message());
  return *this;
}

onnx::NodeProto& ModelBuilder::node(const std::string& op, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs,
                                    const std::string& name, const std::string& domain) {
  auto* n = graph().add_node();
  n->set_op_type(op);
  n->set_name(name);
  n->set_domain(domain);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

std::string ModelBuilder::bytes() const { return model_.SerializeAsString(); }

std::string ModelBuilder::save(const fs::path& dir, const std::string& file) const {
  fs::create_directories(dir);
  const fs::path p = dir / file;
  std::ofstream out(p, std::ios::binary);
  out << bytes();
  return p.string();
}

static onnx::AttributeProto* add(onnx::NodeProto& n, const std::string& name,
                                 onnx::AttributeProto::AttributeType type) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  add(n, name, onnx::AttributeProto::INT)->set_i(v);
}
void set_attr(onnx::NodeProto& n, const std::string& name, float v) {
  add(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
}
void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  add(n, name, onnx::AttributeProto::STRING)->set_s(v);
}
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = add(n, name, onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<float>& v) {
  auto* a = add(n, name, onnx::AttributeProto::FLOATS);
  for (auto x : v) a->add_floats(x);
}
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& v) {
  auto* a = add(n, name, onnx::AttributeProto::STRINGS);
  for (const auto& x : v) a->add_strings(x);
}
void set_attr(onnx::NodeProto& n, const std::string& name, const onnx::GraphProto& g) {
  *add(n, name, onnx::AttributeProto::GRAPH)->mutable_g() = g;
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  path_ = fs::temp_directory_path() /
          ("recur-test-" + std::to_string(rd()) + "-" + std::to_string(counter++));
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

Tensor random_tensor(const Shape& shape, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(static_cast<size_t>(shape_numel(shape)));
  for (auto& x : v) x = u(rng);
  return Tensor::from_vector(shape, v);
}

Tensor tricky_floats(const Shape& shape, std::mt19937& rng) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  std::uniform_int_distribution<int> pick(0, 99);
  const float inf = std::numeric_limits<float>::infinity();
  const int64_t n = shape.empty() ? 1 : shape.back();
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int p = pick(rng);
    const bool nan_row = (i / std::max<int64_t>(n, 1)) % 3 == 2;
    float v = static_cast<float>(pick(rng) % 7) - 3.0f;
    if (p < 3) v = inf;
    if (p >= 3 && p < 6) v = -inf;
    if (p >= 6 && p < 10) v = (p % 2) ? 0.0f : -0.0f;
    if (nan_row && p >= 95) v = std::nanf("");
    t.data<float>()[i] = v;
  }
  return t;
}

Tensor floats(const Shape& shape, const std::vector<float>& values) {
  return Tensor::from_vector<float>(shape, values);
}

Tensor sine_wave(const Shape& shape, float phase, float step, float amplitude) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = amplitude * std::sin(step * static_cast<float>(i) + phase);
  return floats(shape, v);
}

}  // namespace recur::testing
