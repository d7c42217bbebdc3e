// SVMClassifier and SVMRegressor: the kernels and the one-against-one votes worked out by hand,
// the two-class and linear-mode forms ONNX Runtime 1.30 was measured to give, and broken
// attributes. Fitted scikit-learn models are in tests/data/ml/sk_svc_* and sk_svr.
#include <cmath>
#include <string>
#include <vector>

#include "tests/support/op_tester.h"

namespace recur::test {
namespace {

constexpr const char* kMl = "ai.onnx.ml";

// Support vectors (1, 0) and (0, 1), one per class unless changed; a test changes the fields it
// is about, and op() sets every attribute once.
struct Svc {
  std::vector<float> x = {0.5f, 0.2f, 0, 0, -1, 0};  // three rows of two features
  std::vector<float> support_vectors = {1, 0, 0, 1};
  std::vector<int64_t> per_class = {1, 1};
  std::vector<float> coefficients = {1, -1};
  std::vector<float> rho = {-0.2f};
  std::vector<int64_t> labels = {3, 7};
  std::vector<float> prob_a, prob_b;
  std::string kernel = "LINEAR";
  std::vector<float> params = {0.5f, 1, 2};
  std::string post = "NONE";

  OpTester op() const {
    OpTester t("SVMClassifier", 1, kMl);
    t.input(Tensor::from_vector<float>({static_cast<int64_t>(x.size()) / 2, 2}, x))
        .attr("support_vectors", support_vectors)
        .attr("vectors_per_class", per_class)
        .attr("coefficients", coefficients)
        .attr("rho", rho)
        .attr("classlabels_ints", labels)
        .attr("kernel_type", kernel)
        .attr("kernel_params", params)
        .attr("post_transform", post)
        .outputs(2);
    if (!prob_a.empty()) t.attr("prob_a", prob_a).attr("prob_b", prob_b);
    return t;
  }
};

float logistic(float v) { return 1 / (1 + std::exp(-v)); }

// Two classes, linear kernel: s = -0.2 + x0 - x1 is 0.1, -0.2, -1.2 on the three rows; s > 0 is
// a vote for the first class.
TEST(SVMClassifier, TwoClassesGiveMinusSAndS) {
  Svc()
      .op()
      .expect<int64_t>({3}, {3, 7, 7})
      .expect<float>({3, 2}, {-0.1f, 0.1f, 0.2f, -0.2f, 1.2f, -1.2f}, 1e-6)
      .check();
}

TEST(SVMClassifier, TwoClassesLogisticAndSoftmaxForms) {
  Svc logistic_form;
  logistic_form.post = "LOGISTIC";
  logistic_form.op()
      .expect<int64_t>({3}, {3, 7, 7})
      .expect<float>({3, 2},
                     {logistic(-0.1f), logistic(0.1f), logistic(0.2f), logistic(-0.2f),
                      logistic(1.2f), logistic(-1.2f)},
                     1e-6)
      .check();
  Svc softmax_form;
  softmax_form.post = "SOFTMAX";
  softmax_form.op()
      .expect<int64_t>({3}, {3, 7, 7})
      .expect<float>({3, 2}, {0.9f, 0.1f, 1.2f, -0.2f, 2.2f, -1.2f}, 1e-6)
      .check();
}

TEST(SVMClassifier, PolyRbfAndSigmoidKernels) {
  // kernel_params gamma 0.5, coef0 1, degree 2; only the first row, x = (0.5, 0.2).
  const double poly = std::pow(0.5 * 0.5 + 1, 2) - std::pow(0.5 * 0.2 + 1, 2) - 0.2;
  const double rbf = std::exp(-0.5 * (0.25 + 0.04)) - std::exp(-0.5 * (0.25 + 0.64)) - 0.2;
  const double sigmoid = std::tanh(0.5 * 0.5 + 1) - std::tanh(0.5 * 0.2 + 1) - 0.2;
  for (const auto& [kernel, s] : std::vector<std::pair<std::string, double>>{
           {"POLY", poly}, {"RBF", rbf}, {"SIGMOID", sigmoid}}) {
    SCOPED_TRACE(kernel);
    Svc svc;
    svc.x = {0.5f, 0.2f};
    svc.kernel = kernel;
    svc.op()
        .expect<int64_t>({1}, {s > 0 ? 3 : 7})
        .expect<float>({1, 2}, {static_cast<float>(-s), static_cast<float>(s)}, 1e-6)
        .check();
  }
}

TEST(SVMClassifier, ProbabilitiesDoNotChooseTheLabel) {
  // s = x0 - x1 = 0.3 on the first row: a vote for class 3. P(3) = 1 / (1 + exp(0.3 * -1 + 3)),
  // below one half, so the probabilities favour 7 while the label stays 3, as in libsvm's
  // predict and ONNX Runtime.
  Svc svc;
  svc.x = {0.5f, 0.2f, 5, 0};
  svc.rho = {0};
  svc.prob_a = {-1};
  svc.prob_b = {3};
  const float p0 = 1 / (1 + std::exp(2.7f)), p1 = 1 / (1 + std::exp(-2.0f));
  svc.op()
      .expect<int64_t>({2}, {3, 3})
      .expect<float>({2, 2}, {p0, 1 - p0, p1, 1 - p1}, 1e-4)
      .check();
}

// Three classes, support vectors (1, 0), (0, 1), (1, 1), coefficients [[1, -1, 0.5], [0.5, 1,
// -1]]. Pair (0, 1): x0 - x1; (0, 2): 0.5 x0 + 0.5 (x0 + x1); (1, 2): x1 - (x0 + x1).
Svc three_classes() {
  Svc svc;
  svc.support_vectors = {1, 0, 0, 1, 1, 1};
  svc.per_class = {1, 1, 1};
  svc.coefficients = {1, -1, 0.5f, 0.5f, 1, -1};
  svc.rho = {0, 0, 0};
  svc.labels = {1, 2, 3};
  return svc;
}

TEST(SVMClassifier, ThreeClassesVoteOnePairAtATime) {
  // Row 1 votes 0, 0, 2 (class 1); row 2 scores 0 everywhere, so every pair votes for its
  // second class (class 3); row 3 votes 1, 2, 1 (class 2).
  three_classes()
      .op()
      .expect<int64_t>({3}, {1, 3, 2})
      .expect<float>({3, 3}, {0.3f, 0.6f, -0.5f, 0, 0, 0, -1, -1, 1}, 1e-6)
      .check();
  Svc tie = three_classes();  // one vote each: the first class
  tie.x = {0, 0};
  tie.rho = {1, -1, 1};
  tie.op().expect<int64_t>({1}, {1}).expect<float>({1, 3}, {1, -1, 1}).check();
}

TEST(SVMClassifier, LinearModeBinaryRule) {
  // No support vectors: scores x . coefficients[c] + rho[0], the kernel ignored. Rows (2, 0),
  // (-1, 0), (0.1, 0) score (1.8, 0.8), (-1.2, -0.7), (-0.1, -0.15): the second class where the
  // best score is > 0, else the best.
  Svc svc;
  svc.support_vectors = {};
  svc.per_class = {};
  svc.coefficients = {1, -1, 0.5f, 0.5f};
  svc.kernel = "RBF";
  svc.x = {2, 0, -1, 0, 0.1f, 0};
  svc.op()
      .expect<int64_t>({3}, {7, 7, 3})
      .expect<float>({3, 2}, {1.8f, 0.8f, -1.2f, -0.7f, -0.1f, -0.15f}, 1e-6)
      .check();
  // No negative coefficient: the threshold is 0.5, so (0.1, -0.05) from (0.3, 0) picks 3.
  svc.coefficients = {1, 1, 0.5f, 0.5f};
  svc.x = {0.3f, 0, 0.5f, 0.2f};
  svc.op()
      .expect<int64_t>({2}, {3, 7})
      .expect<float>({2, 2}, {0.1f, -0.05f, 0.5f, 0.15f}, 1e-6)
      .check();
}

TEST(SVMClassifier, LinearModeOneClassKeepsTheRawScore) {
  Svc svc;
  svc.support_vectors = {};
  svc.per_class = {};
  svc.labels = {5};
  svc.post = "LOGISTIC";
  svc.op()
      .expect<int64_t>({3}, {5, 5, 5})
      .expect<float>({3, 1}, {0.1f, -0.2f, -1.2f}, 1e-6)
      .check();
}

TEST(SVMClassifier, BrokenAttributesAreRefused) {
  Svc no_labels;
  no_labels.labels = {};
  expect_error(no_labels.op(), ErrorCode::kInvalidModel, "neither classlabels_ints");
  Svc per_class = three_classes();
  per_class.labels = {1, 2};
  expect_error(per_class.op(), ErrorCode::kInvalidModel, "vectors_per_class has 3 entries for 2");
  Svc too_many = three_classes();
  too_many.per_class = {1, 1, 5};
  expect_error(too_many.op(), ErrorCode::kInvalidModel,
               "asks for more support vectors than the 6 values");
  Svc negative = three_classes();
  negative.per_class = {1, -1, 1};
  expect_error(negative.op(), ErrorCode::kInvalidModel, "asks for more support vectors");
  Svc rho = three_classes();
  rho.rho = {0.1f};
  expect_error(rho.op(), ErrorCode::kInvalidModel, "rho has 1 values for the 3 pairs");
  Svc coefficients = three_classes();
  coefficients.coefficients = {1, 2, 3};
  expect_error(coefficients.op(), ErrorCode::kInvalidModel, "coefficients has 3 values");
  Svc probabilities;
  probabilities.prob_a = {1};
  probabilities.prob_b = {};
  expect_error(probabilities.op(), ErrorCode::kInvalidModel, "prob_a and prob_b have 1 and 0");
  Svc kernel;
  kernel.kernel = "CUBIC";
  expect_error(kernel.op(), ErrorCode::kInvalidModel, "kernel_type 'CUBIC'");
  Svc params;
  params.params = {0.5f, 1};
  expect_error(params.op(), ErrorCode::kInvalidModel, "kernel_params has 2 values");
  Svc width;
  width.support_vectors = {1, 0, 0, 0, 1, 0};
  expect_error(width.op(), ErrorCode::kInvalidArgument, "X has 2 columns but the model has 3");
}

OpTester regressor(const std::vector<float>& x) {
  return OpTester("SVMRegressor", 1, kMl)
      .input(Tensor::from_vector<float>({static_cast<int64_t>(x.size()) / 2, 2}, x));
}

TEST(SVMRegressor, SupportVectorsLinearAndOneClass) {
  // RBF, gamma 0.5: y = 0.25 + K(x, (1, 0)) - 0.5 K(x, (0, 1)).
  const auto y0 = static_cast<float>(0.25 + std::exp(-0.5 * 0.29) - 0.5 * std::exp(-0.5 * 0.89));
  const auto y1 = static_cast<float>(0.25 + std::exp(-0.5 * 4.0) - 0.5 * std::exp(-0.5 * 2.0));
  const auto rbf = [](OpTester t, float rho = 0.25f) {
    return t.attr("support_vectors", std::vector<float>{1, 0, 0, 1})
        .attr("n_supports", int64_t{2})
        .attr("coefficients", std::vector<float>{1, -0.5f})
        .attr("rho", std::vector<float>{rho})
        .attr("kernel_type", std::string("RBF"))
        .attr("kernel_params", std::vector<float>{0.5f, 0, 3});
  };
  rbf(regressor({0.5f, 0.2f, -1, 0})).expect<float>({2, 1}, {y0, y1}, 1e-6).check();
  // ONNX Runtime ignores post_transform here; so does recur.
  rbf(regressor({0.5f, 0.2f, -1, 0}).attr("post_transform", std::string("LOGISTIC")))
      .expect<float>({2, 1}, {y0, y1}, 1e-6)
      .check();
  // With rho -0.5: 0.045 at (0.5, 0.2), -0.5 far from both vectors.
  rbf(regressor({0.5f, 0.2f, 5, -5}).attr("one_class", int64_t{1}), -0.5f)
      .expect<float>({2, 1}, {1, -1})
      .check();
  regressor({0.5f, 0.2f, -1, 0})
      .attr("coefficients", std::vector<float>{1, -0.5f})
      .attr("rho", std::vector<float>{0.25f})
      .expect<float>({2, 1}, {0.65f, -0.75f}, 1e-6)
      .check();
}

TEST(SVMRegressor, BrokenAttributesAreRefused) {
  expect_error(regressor({1, 2}).attr("coefficients", std::vector<float>{1, 2}),
               ErrorCode::kInvalidModel, "rho is empty");
  expect_error(regressor({1, 2})
                   .attr("coefficients", std::vector<float>{1, 2})
                   .attr("rho", std::vector<float>{0})
                   .attr("n_supports", int64_t{3})
                   .attr("support_vectors", std::vector<float>{1, 2, 3, 4}),
               ErrorCode::kInvalidModel, "n_supports is 3 but coefficients has 2 values");
  expect_error(regressor({1, 2})
                   .attr("coefficients", std::vector<float>{1, 2, 3})
                   .attr("rho", std::vector<float>{0}),
               ErrorCode::kInvalidArgument, "X has 2 columns but the model has 3");
}

}  // namespace
}  // namespace recur::test
