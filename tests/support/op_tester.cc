#include "tests/support/op_tester.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "runtime/engine/onnx/tensor_proto.h"

namespace recur::test {

namespace {

constexpr char kNodeName[] = "node";

// "x3"; built by append, which GCC 12's -Wrestrict does not misreport as "x" + string does.
std::string numbered(char prefix, size_t i) {
  std::string s(1, prefix);
  s += std::to_string(i);
  return s;
}

double element(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32:
      return t.data<float>()[i];
    case DType::kFloat64:
      return t.data<double>()[i];
    case DType::kFloat16:
      return static_cast<float>(t.data<Float16>()[i]);
    case DType::kBFloat16:
      return static_cast<float>(t.data<BFloat16>()[i]);
    default:
      return 0;
  }
}

std::string error_text(const Error& e) {
  std::ostringstream s;
  s << to_string(e.code()) << ": " << e.what();
  return s.str();
}

}  // namespace

std::string compare_tensors(const Tensor& got, const Tensor& want, double tol) {
  std::ostringstream why;
  if (got.dtype() != want.dtype()) {
    why << "dtype " << dtype_name(got.dtype()) << ", expected " << dtype_name(want.dtype());
    return why.str();
  }
  if (want.is_none()) return "";
  if (want.is_map()) {
    const std::string k = compare_tensors(got.map_keys(), want.map_keys(), 0);
    if (!k.empty()) return "map keys: " + k;
    const std::string v = compare_tensors(got.map_values(), want.map_values(), tol);
    return v.empty() ? "" : "map values: " + v;
  }
  if (want.is_sequence()) {
    if (got.elements().size() != want.elements().size()) {
      why << got.elements().size() << " sequence elements, expected " << want.elements().size();
      return why.str();
    }
    for (size_t i = 0; i < want.elements().size(); ++i) {
      const std::string d = compare_tensors(got.elements()[i], want.elements()[i], tol);
      if (!d.empty()) return "sequence element " + std::to_string(i) + ": " + d;
    }
    return "";
  }
  if (got.shape() != want.shape()) {
    return "shape " + shape_to_string(got.shape()) + ", expected " + shape_to_string(want.shape());
  }
  for (int64_t i = 0; i < want.numel(); ++i) {
    bool same = true;
    if (want.dtype() == DType::kString) {
      same = got.data<std::string>()[i] == want.data<std::string>()[i];
    } else if (is_floating(want.dtype())) {
      const double g = element(got, i), w = element(want, i);
      if (std::isnan(w)) {
        same = std::isnan(g);
      } else if (std::isinf(w)) {
        same = g == w;
      } else {
        same = std::fabs(g - w) <= tol * std::max(1.0, std::fabs(w));
      }
      if (!same) why << "element " << i << ": " << g << ", expected " << w;
    } else {
      const size_t n = dtype_size(want.dtype());
      same = std::memcmp(static_cast<const char*>(got.raw_data()) + i * n,
                         static_cast<const char*>(want.raw_data()) + i * n, n) == 0;
    }
    if (!same) {
      if (why.str().empty()) why << "element " << i << " differs";
      return why.str();
    }
  }
  return "";
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a recur::Error";
  return "";
}

OpTester::OpTester(std::string op, int opset, std::string domain)
    : mb_(domain.empty() ? opset : 17) {
  if (!domain.empty()) mb_.opset(domain, opset);
  mb_.node(op, {}, {}, kNodeName, domain);
}

OpTester& OpTester::add_input(std::string name, Tensor t, bool constant) {
  if (name.empty()) name = numbered('x', inputs_.size());
  inputs_.push_back({std::move(name), std::move(t), constant});
  return *this;
}

OpTester& OpTester::input(Tensor t) { return add_input("", std::move(t), false); }
OpTester& OpTester::input(const std::string& name, Tensor t) {
  return add_input(name, std::move(t), false);
}
OpTester& OpTester::constant(Tensor t) { return add_input("", std::move(t), true); }
OpTester& OpTester::constant(const std::string& name, Tensor t) {
  return add_input(name, std::move(t), true);
}

OpTester& OpTester::input(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
  // Declared now, with its symbols, and given no value: the test feeds it.
  std::vector<std::string> symbols;
  for (size_t i = 0; i < dims.size(); ++i) symbols.push_back(numbered('d', i));
  mb_.input(name, dtype, dims, symbols);
  inputs_.push_back({name, Tensor(), false});
  return *this;
}

OpTester& OpTester::inputs(const std::vector<std::pair<std::string, Tensor>>& named) {
  for (const auto& [name, t] : named) {
    if (name.empty()) {
      omitted();
    } else {
      input(name, t);
    }
  }
  return *this;
}

OpTester& OpTester::omitted() {
  inputs_.push_back({"", Tensor(), false});
  return *this;
}

OpTester& OpTester::dynamic_shapes() {
  dynamic_ = true;
  return *this;
}

OpTester& OpTester::outputs(int n) {
  for (int i = 0; i < n; ++i) output(numbered('y', static_cast<size_t>(node().output_size())));
  return *this;
}

OpTester& OpTester::output(const std::string& name, DType dtype) {
  node().add_output(name);
  if (!name.empty()) mb_.output(name, dtype);
  return *this;
}

OpTester& OpTester::output_dtypes(const std::vector<DType>& dtypes) {
  for (DType d : dtypes) output(numbered('y', static_cast<size_t>(node().output_size())), d);
  return *this;
}

OpTester& OpTester::attr(const std::string& name, const Tensor& v) {
  auto* a = node().add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  tensor_to_proto(v, name, a->mutable_t()).throw_if_error();
  return *this;
}

OpTester& OpTester::attrs(const AttrFn& fn) {
  if (fn) fn(node());
  return *this;
}

OpTester& OpTester::expect_error(ErrorCode code, std::string fragment) {
  error_ = {code, std::move(fragment)};
  return *this;
}

OpTester& OpTester::parity_tolerance(double tol) {
  parity_tol_ = tol;
  return *this;
}

OpTester& OpTester::providers(std::vector<std::string> names) {
  providers_ = std::move(names);
  return *this;
}

OpTester& OpTester::require_claim(const std::string& provider) {
  must_claim_.push_back(provider);
  return *this;
}

std::string OpTester::bytes() const {
  testing::ModelBuilder b = mb_;
  onnx::NodeProto& n = *b.graph().mutable_node(0);
  for (const In& in : inputs_) {
    n.add_input(in.name);
    if (in.name.empty() || !in.value.defined()) continue;  // omitted, or declared already
    if (in.constant) {
      b.initializer(in.name, in.value);
      continue;
    }
    if (in.value.is_map()) {
      b.map_input(in.name, in.value.map_keys().dtype(), in.value.element_dtype());
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
  if (n.output_size() == 0) {
    n.add_output("y0");
    b.output("y0", DType::kUndefined);
  }
  return b.bytes();
}

Feeds OpTester::feeds() const {
  Feeds f;
  for (const In& in : inputs_)
    if (!in.constant && !in.name.empty() && in.value.defined()) f.emplace_back(in.name, in.value);
  return f;
}

Session OpTester::session(const std::string& provider) const {
  const std::string b = bytes();
  SessionOptions o;
  if (provider == "reference") {
    o.providers({"reference"});
  } else {
    // Without graph optimisation, so constant folding cannot take the node from the provider.
    o.providers({provider, "reference"}).optimize(false);
  }
  return Session::from_bytes(b.data(), b.size(), o);
}

std::vector<std::string> OpTester::runnable_providers() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v{"reference"};
    for (const ProviderInfo& p : list_providers())
      if (p.available && p.name != "reference") v.push_back(p.name);
    return v;
  }();
  return names;
}

std::vector<std::string> OpTester::provider_list() const {
  if (providers_.empty()) return runnable_providers();
  const std::vector<std::string> can = runnable_providers();
  std::vector<std::string> v;
  for (const std::string& p : providers_)
    if (std::find(can.begin(), can.end(), p) != can.end()) v.push_back(p);
  return v;
}

std::optional<Outputs> OpTester::run_on(const std::string& provider, const Feeds& feeds) const {
  Session s = session(provider);
  bool claimed = false;
  for (const NodeAssignment& a : s.assignment())
    if (a.node == kNodeName) claimed = a.provider == provider;
  if (!claimed) {
    const bool required =
        std::find(must_claim_.begin(), must_claim_.end(), provider) != must_claim_.end();
    EXPECT_FALSE(required) << provider << ": not claimed, but the test requires it to be";
    return std::nullopt;
  }
  return s.run(feeds);
}

Outputs OpTester::run(const Feeds& feeds) const {
  std::optional<Outputs> want;
  std::optional<Error> want_error;
  try {
    want = session("reference").run(feeds);
  } catch (const Error& e) {
    want_error = e;
  }
  for (const std::string& p : provider_list()) {
    if (p == "reference") continue;
    try {
      std::optional<Outputs> got = run_on(p, feeds);
      if (!got) continue;
      if (want_error) {
        ADD_FAILURE() << p << ": ran, but reference gave " << error_text(*want_error);
        continue;
      }
      EXPECT_EQ(got->size(), want->size()) << p << ": number of outputs";
      for (size_t i = 0; i < std::min(got->size(), want->size()); ++i) {
        const std::string d = compare_tensors((*got)[i], (*want)[i], parity_tol_);
        EXPECT_TRUE(d.empty()) << p << ": output " << i << " differs from reference: " << d;
      }
    } catch (const Error& e) {
      if (!want_error) {
        ADD_FAILURE() << p << ": " << error_text(e) << ", but reference ran";
      } else {
        EXPECT_EQ(e.code(), want_error->code()) << p << ": " << e.what();
      }
    }
  }
  if (want_error) throw *want_error;
  return *want;
}

void OpTester::check() const {
  const Feeds f = feeds();
  for (const std::string& p : provider_list()) {
    SCOPED_TRACE("provider " + p);
    if (error_) {
      try {
        if (p == "reference") {
          session(p).run(f);
        } else if (!run_on(p, f)) {
          continue;
        }
        ADD_FAILURE() << p << ": no error was raised";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), error_->first) << p << ": " << e.what();
        // Other providers word their own messages; the reference one is the specification.
        if (p == "reference") {
          EXPECT_NE(std::string(e.what()).find(error_->second), std::string::npos)
              << p << ": '" << error_->second << "' not in: " << e.what();
        }
      }
      continue;
    }
    try {
      std::optional<Outputs> got = p == "reference" ? session(p).run(f) : run_on(p, f);
      if (!got) continue;
      ASSERT_GE(got->size(), expected_.size()) << p << ": number of outputs";
      for (size_t i = 0; i < expected_.size(); ++i) {
        const std::string d = compare_tensors((*got)[i], expected_[i].value, expected_[i].tol);
        EXPECT_TRUE(d.empty()) << p << ": output " << i << ": " << d;
      }
    } catch (const Error& e) {
      ADD_FAILURE() << p << ": " << error_text(e);
    }
  }
}

Outputs run_op(const std::string& op, int opset,
               const std::vector<std::pair<std::string, Tensor>>& inputs,
               const OpTester::AttrFn& attrs, std::vector<DType> out_dtypes) {
  if (out_dtypes.empty()) out_dtypes.push_back(inputs.at(0).second.dtype());
  return OpTester(op, opset)
      .dynamic_shapes()
      .inputs(inputs)
      .attrs(attrs)
      .output_dtypes(out_dtypes)
      .run();
}

}  // namespace recur::test
