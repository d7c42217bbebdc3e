// The ai.onnx.ml scorers (LinearClassifier, LinearRegressor, TreeEnsembleClassifier,
// TreeEnsembleRegressor) and Normalizer, Scaler, Imputer: the forms where ONNX Runtime and the
// ONNX reference implementation differ (expected values worked out by hand from what ONNX
// Runtime 1.30 was measured to give), and broken attributes. Whole scikit-learn models are in
// tests/data/ml (tools/gen_sklearn_tests.py).
#include <cmath>
#include <string>
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr const char* kMl = "ai.onnx.ml";

OpTester linear_binary(const std::string& post) {
  // s = x0 - x1 + 0.5 on the rows below: -0.5, 1.5, 0.
  return OpTester("LinearClassifier", 1, kMl)
      .input(Tensor::from_vector<float>({3, 2}, {1, 2, 2, 1, 0.25f, 0.75f}))
      .attr("coefficients", std::vector<float>{1, -1})
      .attr("intercepts", std::vector<float>{0.5f})
      .attr("classlabels_ints", std::vector<int64_t>{3, 7})
      .attr("post_transform", post)
      .outputs(2);
}

TEST(LinearClassifier, BinaryFormGivesOneMinusScoreAndScore) {
  linear_binary("NONE")
      .expect<int64_t>({3}, {3, 7, 3})
      .expect<float>({3, 2}, {1.5f, -0.5f, -0.5f, 1.5f, 1, 0})
      .check();
}

TEST(LinearClassifier, BinaryLogistic) {
  const float p0 = 1 / (1 + std::exp(0.5f)), p1 = 1 / (1 + std::exp(-1.5f));
  linear_binary("LOGISTIC")
      .expect<int64_t>({3}, {3, 7, 3})
      .expect<float>({3, 2}, {1 - p0, p0, 1 - p1, p1, 0.5f, 0.5f})
      .check();
}

TEST(LinearClassifier, LabelsAndScoresMustAgreeInNumber) {
  expect_error(OpTester("LinearClassifier", 1, kMl)
                   .input(Tensor::from_vector<float>({1, 2}, {1, 2}))
                   .attr("coefficients", std::vector<float>{1, 0, 0, 1, 1, 1})
                   .attr("intercepts", std::vector<float>{0, 0, 0})
                   .attr("classlabels_ints", std::vector<int64_t>{1, 2})
                   .outputs(2),
               ErrorCode::kInvalidArgument, "3 score(s) per row but 2 class label(s)");
}

TEST(LinearClassifier, CoefficientsMustMatchTheColumns) {
  expect_error(OpTester("LinearClassifier", 1, kMl)
                   .input(Tensor::from_vector<float>({1, 3}, {1, 2, 3}))
                   .attr("coefficients", std::vector<float>{1, 0, 0, 1})
                   .attr("intercepts", std::vector<float>{0, 0})
                   .outputs(2),
               ErrorCode::kInvalidArgument, "X has 3 columns but coefficients has 4 values");
}

TEST(LinearRegressor, OneRowInputAndProbit) {
  // 0.1 - 0.2 + 0.6 = 0.5 -> probit(0.5) = 0; 0.05 + 0.05 + 0.2 = 0.3.
  OpTester("LinearRegressor", 1, kMl)
      .input(Tensor::from_vector<float>({2}, {0.1f, 0.2f}))
      .attr("coefficients", std::vector<float>{1, -1, 0.5f, 0.25f})
      .attr("intercepts", std::vector<float>{0.6f, 0.2f})
      .attr("targets", int64_t{2})
      .attr("post_transform", std::string("PROBIT"))
      .expect<float>({1, 2}, {0.0f, -0.5244459f}, 1e-5)
      .check();
}

TEST(Normalizer, MaxIsTheLargestValueNotMagnitude) {
  OpTester("Normalizer", 1, kMl)
      .input(Tensor::from_vector<float>({3, 3}, {1, -3, 2, -1, -2, -0.5f, 0, 0, 0}))
      .attr("norm", std::string("MAX"))
      .expect<float>({3, 3}, {0.5f, -1.5f, 1, 2, 4, 1, 0, 0, 0})
      .check();
}

TEST(Scaler, IntegerInputGivesFloat) {
  OpTester("Scaler", 1, kMl)
      .input(Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4}))
      .attr("offset", std::vector<float>{1})
      .attr("scale", std::vector<float>{2, 0.5f})
      .expect<float>({2, 2}, {0, 0.5f, 4, 1.5f})
      .check();
}

TEST(Imputer, Int64AndAWrongWidth) {
  OpTester("Imputer", 1, kMl)
      .input(Tensor::from_vector<int64_t>({2, 2}, {-1, 5, 6, -1}))
      .attr("imputed_value_int64s", std::vector<int64_t>{10, 20})
      .attr("replaced_value_int64", int64_t{-1})
      .expect<int64_t>({2, 2}, {10, 5, 6, 20})
      .check();
  expect_error(OpTester("Imputer", 1, kMl)
                   .input(Tensor::from_vector<float>({1, 3}, {1, 2, 3}))
                   .attr("imputed_value_floats", std::vector<float>{1, 2})
                   .attr("replaced_value_float", 2.0f),
               ErrorCode::kInvalidArgument, "X with 3 columns needs 1 or 3");
}

// One tree: x0 <= 0.5 goes to leaf 1, else (or NaN) to leaf 2; tests change fields to break it.
struct Stump {
  std::vector<int64_t> node_ids = {0, 1, 2};
  std::vector<int64_t> features = {0, 0, 0};
  std::vector<float> values = {0.5f, 0, 0};
  std::vector<std::string> modes = {"BRANCH_LEQ", "LEAF", "LEAF"};
  std::vector<int64_t> true_ids = {1, 0, 0};
  std::vector<int64_t> false_ids = {2, 0, 0};
  std::vector<int64_t> leaves;  // each contribution's leaf: 1, 2, 1, 2, ... unless set
  std::vector<int64_t> ids;
  std::vector<float> weights;

  OpTester op(const std::string& op, const std::string& prefix) const {
    std::vector<int64_t> at = leaves;
    for (size_t k = at.size(); k < ids.size(); ++k) at.push_back(1 + static_cast<int64_t>(k % 2));
    return OpTester(op, 3, kMl)
        .input(Tensor::from_vector<float>({3, 1}, {0, 1, std::nanf("")}))
        .attr("nodes_treeids", std::vector<int64_t>(node_ids.size(), 0))
        .attr("nodes_nodeids", node_ids)
        .attr("nodes_featureids", features)
        .attr("nodes_values", values)
        .attr("nodes_modes", modes)
        .attr("nodes_truenodeids", true_ids)
        .attr("nodes_falsenodeids", false_ids)
        .attr(prefix + "_treeids", std::vector<int64_t>(ids.size(), 0))
        .attr(prefix + "_nodeids", at)
        .attr(prefix + "_ids", ids)
        .attr(prefix + "_weights", weights);
  }
};

OpTester stump(const std::string& op, const std::string& prefix, std::vector<int64_t> ids,
               std::vector<float> weights) {
  Stump s;
  s.ids = std::move(ids);
  s.weights = std::move(weights);
  return s.op(op, prefix);
}

TEST(TreeEnsembleClassifier, OneClassPositiveWeightsThresholdAtHalf) {
  stump("TreeEnsembleClassifier", "class", {0, 0}, {0.3f, 0.8f})
      .attr("classlabels_int64s", std::vector<int64_t>{0, 1})
      .outputs(2)
      .expect<int64_t>({3}, {0, 1, 1})
      .expect<float>({3, 2}, {0.7f, 0.3f, 0.2f, 0.8f, 0.2f, 0.8f})
      .check();
}

TEST(TreeEnsembleClassifier, OneClassWithANegativeWeightThresholdAtZero) {
  stump("TreeEnsembleClassifier", "class", {0, 0}, {-0.3f, 0.8f})
      .attr("classlabels_strings", std::vector<std::string>{"no", "yes"})
      .outputs(2)
      .expect<std::string>({3}, {"no", "yes", "yes"})
      .expect<float>({3, 2}, {0.3f, -0.3f, -0.8f, 0.8f, -0.8f, 0.8f})
      .check();
}

TEST(TreeEnsembleClassifier, LabelIgnoresClassesNoLeafScored) {
  stump("TreeEnsembleClassifier", "class", {0, 1, 2, 2}, {-0.3f, -0.7f, -0.8f, -0.2f})
      .attr("classlabels_int64s", std::vector<int64_t>{4, 5, 6})
      .outputs(2)
      .expect<int64_t>({3}, {4, 6, 6})
      .expect<float>({3, 3}, {-0.3f, 0, -0.8f, 0, -0.7f, -0.2f, 0, -0.7f, -0.2f})
      .check();
}

TEST(TreeEnsembleRegressor, AverageMinMaxAndBase) {
  // Two leaves name target 0 and target 1; target 1 has no contribution at leaf 1.
  for (auto [agg, want] : std::vector<std::pair<std::string, std::vector<float>>>{
           {"SUM", {1.3f, 2, 2.8f, 2.5f}},
           {"MIN", {1.3f, 2, 2.8f, 2.5f}},
           {"AVERAGE", {1.3f, 2, 2.8f, 2.5f}}}) {
    SCOPED_TRACE(agg);
    OpTester("TreeEnsembleRegressor", 3, kMl)
        .input(Tensor::from_vector<float>({2, 1}, {0, 1}))
        .attr("nodes_treeids", std::vector<int64_t>{0, 0, 0})
        .attr("nodes_nodeids", std::vector<int64_t>{0, 1, 2})
        .attr("nodes_featureids", std::vector<int64_t>{0, 0, 0})
        .attr("nodes_values", std::vector<float>{0.5f, 0, 0})
        .attr("nodes_modes", std::vector<std::string>{"BRANCH_LEQ", "LEAF", "LEAF"})
        .attr("nodes_truenodeids", std::vector<int64_t>{1, 0, 0})
        .attr("nodes_falsenodeids", std::vector<int64_t>{2, 0, 0})
        .attr("target_treeids", std::vector<int64_t>{0, 0, 0})
        .attr("target_nodeids", std::vector<int64_t>{1, 2, 2})
        .attr("target_ids", std::vector<int64_t>{0, 0, 1})
        .attr("target_weights", std::vector<float>{0.3f, 1.8f, 0.5f})
        .attr("n_targets", int64_t{2})
        .attr("aggregate_function", agg)
        .attr("base_values", std::vector<float>{1, 2})
        .expect<float>({2, 2}, want, 1e-5)
        .check();
  }
}

TEST(TreeEnsembleBroken, EveryLinkIsChecked) {
  const Stump good{.ids = {0, 0}, .weights = {1, 2}};
  auto broken = [&](auto change) {
    Stump s = good;
    change(s);
    return s.op("TreeEnsembleRegressor", "target");
  };
  expect_error(broken([](Stump& s) { s.false_ids[0] = 7; }), ErrorCode::kInvalidModel,
               "branches to node 7, which the tree does not have");
  expect_error(broken([](Stump& s) { s.modes[0] = "BRANCH_LQ"; }), ErrorCode::kInvalidModel,
               "'BRANCH_LQ', not a BRANCH_* mode or LEAF");
  expect_error(broken([](Stump& s) {
                 s.leaves = {0, 2};
               }),
               ErrorCode::kInvalidModel, "names node 0 of tree 0, which is not a leaf");
  expect_error(broken([](Stump& s) {
                 s.ids = {0, 1};
               }),
               ErrorCode::kInvalidModel, "target_ids has 1, outside [0, 1)");
  expect_error(broken([](Stump& s) {
                 s.node_ids = {0, 1, 1};
               }),
               ErrorCode::kInvalidModel, "node 1 of tree 0 is defined twice");
  expect_error(broken([](Stump& s) { s.values = {0.5f}; }), ErrorCode::kInvalidModel,
               "the nodes_* attributes differ in length");
  expect_error(broken([](Stump& s) { s.features[0] = 3; }), ErrorCode::kInvalidArgument,
               "the trees read feature 3 but X has 1");
}

TEST(TreeEnsembleBroken, ACycleIsFoundAtRunTime) {
  // Node 1 is a branch whose false branch leads back to the root: x = 0 goes round forever.
  const Stump s{.modes = {"BRANCH_LEQ", "BRANCH_GT", "LEAF"},
                .true_ids = {1, 2, 0},
                .false_ids = {2, 0, 0},
                .leaves = {2},
                .ids = {0},
                .weights = {1}};
  expect_error(s.op("TreeEnsembleRegressor", "target"), ErrorCode::kInvalidArgument,
               "a tree has a cycle");
}

}  // namespace
}  // namespace recur::test
