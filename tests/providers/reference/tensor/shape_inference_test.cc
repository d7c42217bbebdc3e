// The static shape rules of the tensor/ operators checked against what the kernels produce,
// on every ONNX backend node test made only of these operators. The models' declared output
// shapes are removed first, so what the session reports comes from the rules alone; a second
// pass also makes every input dimension symbolic. A rule may leave a dimension unknown, but a
// dimension it fixes, or names after an input's dimension, must be the one the kernel produces.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/op_tester.h"
#include "tools/common/testdir.h"

namespace recur::test {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kTensorOps = {"Compress",
                                          "Concat",
                                          "Constant",
                                          "ConstantOfShape",
                                          "DepthToSpace",
                                          "Dropout",
                                          "Expand",
                                          "EyeLike",
                                          "Flatten",
                                          "Gather",
                                          "GatherElements",
                                          "GatherND",
                                          "Identity",
                                          "NonZero",
                                          "OneHot",
                                          "Pad",
                                          "Range",
                                          "Reshape",
                                          "ReverseSequence",
                                          "Scatter",
                                          "ScatterElements",
                                          "ScatterND",
                                          "Shape",
                                          "Size",
                                          "Slice",
                                          "SpaceToDepth",
                                          "Split",
                                          "Squeeze",
                                          "Tile",
                                          "TopK",
                                          "Transpose",
                                          "Trilu",
                                          "Unique",
                                          "Unsqueeze"};

bool only_tensor_ops(const onnx::GraphProto& g) {
  for (const auto& n : g.node()) {
    if (!n.domain().empty() || !kTensorOps.count(n.op_type())) return false;
  }
  return g.node_size() > 0;
}

struct Checked {
  int models = 0, outputs = 0, fully_known = 0;
};

// Returns "" or the first disagreement.
std::string check(const std::string& dir, const onnx::ModelProto& mp, Checked* stats) {
  std::string bytes;
  mp.SerializeToString(&bytes);
  std::optional<Session> session;
  try {
    session.emplace(
        Session::from_bytes(bytes.data(), bytes.size(), SessionOptions{}.providers({"reference"})));
  } catch (const Error&) {
    return "";  // a model recur does not run (sequences, training dropout) has no shapes to check
  }
  auto ds = tools::read_data_sets(dir);
  if (!ds.ok() || ds->empty()) return "";
  auto feeds = tools::feeds_for(*session, (*ds)[0]);
  if (!feeds.ok()) return "";
  Outputs outs;
  try {
    outs = session->run(*feeds);
  } catch (const Error&) {
    return "";
  }
  // The symbolic pass names input dimension d of input x "x_d".
  std::map<std::string, int64_t> symbols;
  for (const auto& [name, t] : *feeds)
    for (int64_t d = 0; d < t.rank(); ++d) symbols[name + "_" + std::to_string(d)] = t.dim(d);
  ++stats->models;
  for (size_t i = 0; i < outs.size(); ++i) {
    const ValueInfo& vi = session->outputs()[i];
    const Tensor& t = outs[i];
    ++stats->outputs;
    if (vi.dtype != DType::kUndefined && vi.dtype != t.dtype()) {
      return vi.name + ": inferred dtype " + std::string(dtype_name(vi.dtype)) + ", got " +
             std::string(dtype_name(t.dtype()));
    }
    if (!vi.shape) continue;
    if (vi.shape->size() != static_cast<size_t>(t.rank())) {
      return vi.name + ": inferred " + vi.shape_string() + ", got " + shape_to_string(t.shape());
    }
    bool all = true;
    for (size_t d = 0; d < vi.shape->size(); ++d) {
      const Dim& dim = (*vi.shape)[d];
      all = all && dim.is_fixed();
      const auto sym = symbols.find(dim.symbol);
      if ((dim.is_fixed() && dim.value != t.shape()[d]) ||
          (!dim.is_fixed() && sym != symbols.end() && sym->second != t.shape()[d])) {
        return vi.name + ": inferred " + vi.shape_string() + ", got " + shape_to_string(t.shape());
      }
    }
    stats->fully_known += all;
  }
  return "";
}

TEST(TensorShapeInference, AgreesWithTheKernelsOnTheNodeTests) {
  const fs::path root = "/usr/share/libonnx-testdata/data/node";
  if (!fs::is_directory(root)) GTEST_SKIP() << root << " is not installed";
  Checked stat[2];
  for (const auto& entry : fs::directory_iterator(root)) {
    const fs::path model = entry.path() / "model.onnx";
    std::ifstream in(model, std::ios::binary);
    if (!in) continue;
    onnx::ModelProto mp;
    if (!mp.ParseFromIstream(&in) || !only_tensor_ops(mp.graph())) continue;
    auto* g = mp.mutable_graph();
    g->clear_value_info();
    for (auto& out : *g->mutable_output()) out.clear_type();
    EXPECT_EQ(check(entry.path(), mp, &stat[0]), "") << entry.path();
    for (auto& input : *g->mutable_input()) {
      auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
      for (int d = 0; d < shape->dim_size(); ++d) {
        shape->mutable_dim(d)->set_dim_param(input.name() + "_" + std::to_string(d));
      }
    }
    EXPECT_EQ(check(entry.path(), mp, &stat[1]), "") << entry.path() << " (symbolic inputs)";
  }
  for (const Checked& s : stat) {
    std::cout << s.models << " models, " << s.outputs << " outputs, " << s.fully_known
              << " with fully inferred shapes\n";
  }
  EXPECT_GT(stat[0].models, 100);
}

}  // namespace
}  // namespace recur::test
