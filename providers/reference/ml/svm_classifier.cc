// SVMClassifier (ai.onnx.ml 1), in the two modes of libsvm and liblinear, with the outputs ONNX
// Runtime 1.30 was measured to give (the ONNX reference implementation differs in the two-class
// forms). Y is the label [N] (classlabels_ints or classlabels_strings, one of which is required),
// Z the float scores.
//
// Support-vector mode (vectors_per_class sums to V > 0). Class c owns vectors_per_class[c]
// consecutive rows of support_vectors ([V, F]); coefficients is [C - 1, V] (libsvm's sv_coef).
// For each pair of classes i < j, in order, s = rho[pair] + sum over i's vectors v of
// coefficients[j - 1][v] K(x, v) + sum over j's of coefficients[i][v] K(x, v), and s > 0 is a vote
// for i, else for j. The label is the class with the most votes (the first of a tie), also when
// probabilities are computed. Z holds
//   - with prob_a and prob_b: the C class probabilities, libsvm's pairwise coupling of
//     P(i | i or j) = 1 / (1 + exp(s prob_a[pair] + prob_b[pair])), clamped to [1e-7, 1 - 1e-7];
//   - otherwise, for C > 2, the C (C - 1) / 2 pair scores, and for C = 2, two columns: [-s, s]
//     (NONE), [logistic(-s), logistic(s)] (LOGISTIC), [1 - s, s] (SOFTMAX, SOFTMAX_ZERO) or
//     [probit(s), 0] (PROBIT).
// post_transform then applies to the row, except in the two-column form above.
//
// Linear mode (no support vectors): coefficients is [C, F], s[c] = x . coefficients[c] + rho[0]
// and the kernel is ignored. The label is the class of the largest score; with two classes it
// is the second where that score is > 0 (>= 0.5 when no coefficient is negative), as in ONNX
// Runtime. With one class, Z is the raw score (only PROBIT is applied).
//
// scikit-learn's SVC keeps its two-class dual coefficients and intercept negated relative to
// libsvm; a converter negates them back (tests/data/ml/sk_svc_binary).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "providers/reference/common/util.h"
#include "providers/reference/ml/ml_common.h"
#include "providers/reference/ml/ml_ops.h"
#include "providers/reference/ml/svm_common.h"

namespace recur::reference {

namespace {

struct SvmClassifierSpec {
  ml::ClassLabels labels;
  ml::PostTransform post = ml::PostTransform::kNone;
  ml::SvmKernel kernel;
  std::vector<float> coefficients, rho, prob_a, prob_b, support_vectors;
  std::vector<int64_t> start, count;  // each class's first support vector and how many
  int64_t classes = 0, features = 0, vectors = 0;
  bool weights_all_positive = true;

  bool svc() const { return vectors > 0; }
  int64_t pairs() const { return classes * (classes - 1) / 2; }
  bool probabilities() const { return svc() && !prob_a.empty(); }
  int64_t width() const {
    if (!svc() || probabilities()) return classes;
    return classes == 2 ? 2 : pairs();
  }

  static Result<SvmClassifierSpec> read(const Node& node);
};

Result<SvmClassifierSpec> SvmClassifierSpec::read(const Node& node) {
  SvmClassifierSpec s;
  AttrReader attrs(node);
  s.coefficients = attrs.get_floats("coefficients");
  s.rho = attrs.get_floats("rho");
  s.prob_a = attrs.get_floats("prob_a");
  s.prob_b = attrs.get_floats("prob_b");
  s.support_vectors = attrs.get_floats("support_vectors");
  const std::vector<int64_t> per_class = attrs.get_ints("vectors_per_class");
  RECUR_RETURN_IF_ERROR(attrs.status());
  RECUR_ASSIGN_OR_RETURN(s.labels,
                         ml::read_class_labels(node, "classlabels_ints", "classlabels_strings"));
  RECUR_ASSIGN_OR_RETURN(s.post, ml::read_post_transform(node));
  RECUR_ASSIGN_OR_RETURN(s.kernel, ml::read_svm_kernel(node));
  const std::string where = node.describe() + ": ";
  s.classes = s.labels.size();
  if (s.classes == 0) {
    return invalid_model(where + "neither classlabels_ints nor classlabels_strings is set");
  }
  if (s.rho.empty()) return invalid_model(where + "rho is empty");
  // Summed with a bound, so that counts larger than support_vectors cannot overflow.
  const auto n_sv = static_cast<int64_t>(s.support_vectors.size());
  for (int64_t c : per_class) {
    if (c < 0 || c > n_sv - s.vectors) {
      return invalid_model(where + "vectors_per_class asks for more support vectors than the " +
                           std::to_string(n_sv) + " values of support_vectors hold");
    }
    s.start.push_back(s.vectors);
    s.count.push_back(c);
    s.vectors += c;
  }
  for (float w : s.coefficients) s.weights_all_positive = s.weights_all_positive && w >= 0;
  const auto n_coef = static_cast<int64_t>(s.coefficients.size());
  if (!s.svc()) {
    if (n_coef == 0 || n_coef % s.classes != 0) {
      return invalid_model(where + "coefficients has " + std::to_string(n_coef) +
                           " values, not a positive multiple of the " + std::to_string(s.classes) +
                           " classes");
    }
    s.features = n_coef / s.classes;
    return s;
  }
  if (static_cast<int64_t>(per_class.size()) != s.classes) {
    return invalid_model(where + "vectors_per_class has " + std::to_string(per_class.size()) +
                         " entries for " + std::to_string(s.classes) + " class labels");
  }
  if (s.classes < 2) {
    return invalid_model(where + "a support-vector classifier needs at least 2 classes");
  }
  if (n_sv % s.vectors != 0) {
    return invalid_model(where + "support_vectors has " + std::to_string(n_sv) +
                         " values, not a multiple of the " + std::to_string(s.vectors) +
                         " support vectors");
  }
  s.features = n_sv / s.vectors;
  if (n_coef != (s.classes - 1) * s.vectors) {
    return invalid_model(where + "coefficients has " + std::to_string(n_coef) + " values; " +
                         std::to_string(s.classes) + " classes and " + std::to_string(s.vectors) +
                         " support vectors need " + std::to_string((s.classes - 1) * s.vectors));
  }
  const int64_t pairs = s.pairs();
  if (static_cast<int64_t>(s.rho.size()) < pairs) {
    return invalid_model(where + "rho has " + std::to_string(s.rho.size()) + " values for the " +
                         std::to_string(pairs) + " pairs of classes");
  }
  if (!s.prob_a.empty() && (static_cast<int64_t>(s.prob_a.size()) < pairs ||
                            static_cast<int64_t>(s.prob_b.size()) < pairs)) {
    return invalid_model(where + "prob_a and prob_b have " + std::to_string(s.prob_a.size()) +
                         " and " + std::to_string(s.prob_b.size()) + " values for the " +
                         std::to_string(pairs) + " pairs of classes");
  }
  return s;
}

// libsvm's multiclass_probability (Wu, Lin and Weng, 2004, method 2): the class probabilities p
// that best fit the pairwise r[i][j] = P(i | i or j). q is k * k scratch, qp k.
void couple(int64_t k, const std::vector<double>& r, std::vector<double>& q,
            std::vector<double>& qp, std::vector<double>& p) {
  for (int64_t t = 0; t < k; ++t) {
    p[t] = 1.0 / static_cast<double>(k);
    double& diag = q[t * k + t];
    diag = 0;
    for (int64_t j = 0; j < k; ++j) {
      if (j == t) continue;
      diag += r[j * k + t] * r[j * k + t];
      q[t * k + j] = -r[j * k + t] * r[t * k + j];
    }
  }
  const int64_t max_iter = std::max<int64_t>(100, k);
  const double eps = 0.005 / static_cast<double>(k);
  for (int64_t iter = 0; iter < max_iter; ++iter) {
    double pqp = 0;
    for (int64_t t = 0; t < k; ++t) {
      qp[t] = 0;
      for (int64_t j = 0; j < k; ++j) qp[t] += q[t * k + j] * p[j];
      pqp += p[t] * qp[t];
    }
    double max_error = 0;
    for (int64_t t = 0; t < k; ++t) max_error = std::max(max_error, std::abs(qp[t] - pqp));
    if (max_error < eps) break;
    for (int64_t t = 0; t < k; ++t) {
      const double diag = q[t * k + t];
      const double diff = (pqp - qp[t]) / diag;
      p[t] += diff;
      pqp = (pqp + diff * (diff * diag + 2 * qp[t])) / ((1 + diff) * (1 + diff));
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[t * k + j]) / (1 + diff);
        p[j] /= 1 + diff;
      }
    }
  }
}

// 1 / (1 + exp(v)) without overflow for either sign of v.
double sigmoid_complement(double v) {
  return v >= 0 ? std::exp(-v) / (1 + std::exp(-v)) : 1 / (1 + std::exp(v));
}

class SvmClassifierKernel final : public Kernel {
 public:
  explicit SvmClassifierKernel(SvmClassifierSpec s) : s_(std::move(s)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    ml::FeatureRows rows;
    RECUR_RETURN_IF_ERROR(ml::read_feature_rows(ctx, *x, &rows));
    if (rows.cols != s_.features) {
      return ctx.error(ErrorCode::kInvalidArgument, "X has " + std::to_string(rows.cols) +
                                                        " columns but the model has " +
                                                        std::to_string(s_.features) + " features");
    }
    const int64_t width = s_.width();
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ml::allocate_labels(ctx, s_.labels, rows.rows));
    RECUR_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(1, DType::kFloat32, {rows.rows, width}));
    float* out = z->data<float>();
    if (s_.svc()) {
      Scratch w(s_);
      for (int64_t r = 0; r < rows.rows; ++r) {
        ml::set_label(*y, r, s_.labels, run_svc(rows.row(r), out + r * width, w));
      }
    } else {
      for (int64_t r = 0; r < rows.rows; ++r) {
        ml::set_label(*y, r, s_.labels, run_linear(rows.row(r), out + r * width));
      }
    }
    return ok_status();
  }

 private:
  struct Scratch {
    explicit Scratch(const SvmClassifierSpec& s)
        : kernels(static_cast<size_t>(s.vectors)),
          scores(static_cast<size_t>(s.pairs())),
          votes(static_cast<size_t>(s.classes)) {
      if (s.probabilities()) {
        const auto k = static_cast<size_t>(s.classes);
        r.resize(k * k);
        q.resize(k * k);
        qp.resize(k);
        p.resize(k);
      }
    }
    std::vector<float> kernels, scores;
    std::vector<int64_t> votes;
    std::vector<double> r, q, qp, p;
  };

  int64_t run_svc(const float* x, float* o, Scratch& w) const {
    const int64_t f = s_.features;
    for (int64_t v = 0; v < s_.vectors; ++v) {
      w.kernels[v] = s_.kernel(x, s_.support_vectors.data() + v * f, f);
    }
    std::fill(w.votes.begin(), w.votes.end(), 0);
    const float* coef = s_.coefficients.data();
    int64_t pair = 0;
    for (int64_t i = 0; i < s_.classes; ++i) {
      for (int64_t j = i + 1; j < s_.classes; ++j, ++pair) {
        double sum = s_.rho[pair];
        for (int64_t v = s_.start[i]; v < s_.start[i] + s_.count[i]; ++v) {
          sum += static_cast<double>(coef[(j - 1) * s_.vectors + v]) * w.kernels[v];
        }
        for (int64_t v = s_.start[j]; v < s_.start[j] + s_.count[j]; ++v) {
          sum += static_cast<double>(coef[i * s_.vectors + v]) * w.kernels[v];
        }
        w.scores[pair] = static_cast<float>(sum);
        ++w.votes[sum > 0 ? i : j];
      }
    }
    const int64_t label = std::max_element(w.votes.begin(), w.votes.end()) - w.votes.begin();
    if (s_.probabilities()) {
      write_probabilities(w, o);
    } else if (s_.classes == 2) {
      write_two(w.scores[0], o);
    } else {
      std::copy(w.scores.begin(), w.scores.end(), o);
      ml::post_transform_row(s_.post, o, s_.pairs());
    }
    return label;
  }

  void write_probabilities(Scratch& w, float* o) const {
    const int64_t k = s_.classes;
    int64_t pair = 0;
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = i + 1; j < k; ++j, ++pair) {
        const double p =
            std::clamp(sigmoid_complement(static_cast<double>(w.scores[pair]) * s_.prob_a[pair] +
                                          s_.prob_b[pair]),
                       1e-7, 1 - 1e-7);
        w.r[i * k + j] = p;
        w.r[j * k + i] = 1 - p;
      }
    }
    couple(k, w.r, w.q, w.qp, w.p);
    for (int64_t c = 0; c < k; ++c) o[c] = static_cast<float>(w.p[c]);
    ml::post_transform_row(s_.post, o, k);
  }

  void write_two(float s, float* o) const {
    switch (s_.post) {
      case ml::PostTransform::kLogistic:
        o[0] = -s;
        o[1] = s;
        ml::post_transform_row(s_.post, o, 2);
        break;
      case ml::PostTransform::kSoftmax:
      case ml::PostTransform::kSoftmaxZero:
        o[0] = 1 - s;
        o[1] = s;
        break;
      case ml::PostTransform::kProbit:
        o[0] = ml::probit(s);
        o[1] = 0;
        break;
      default:
        o[0] = -s;
        o[1] = s;
    }
  }

  int64_t run_linear(const float* x, float* o) const {
    const int64_t f = s_.features;
    for (int64_t c = 0; c < s_.classes; ++c) {
      double sum = s_.rho[0];
      const float* w = s_.coefficients.data() + c * f;
      for (int64_t i = 0; i < f; ++i) sum += static_cast<double>(x[i]) * w[i];
      o[c] = static_cast<float>(sum);
    }
    const int64_t best = std::max_element(o, o + s_.classes) - o;
    int64_t label = best;
    if (s_.classes == 2) {
      const float top = o[best];
      if (s_.weights_all_positive ? top >= 0.5f : top > 0) label = 1;
    }
    if (s_.classes > 1 || s_.post == ml::PostTransform::kProbit) {
      ml::post_transform_row(s_.post, o, s_.classes);
    }
    return label;
  }

  SvmClassifierSpec s_;
};

Result<std::unique_ptr<Kernel>> create_svm_classifier(CompileContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(SvmClassifierSpec s, SvmClassifierSpec::read(ctx.node()));
  return std::make_unique<SvmClassifierKernel>(std::move(s));
}

Status infer_svm_classifier(InferContext& ctx) {
  RECUR_ASSIGN_OR_RETURN(SvmClassifierSpec s, SvmClassifierSpec::read(ctx.node()));
  return ml::infer_scorer(ctx, &s.labels, 0, 1, s.width());
}

}  // namespace

void register_svm_classifier(Registrar& r) {
  r.add({.op_type = "SVMClassifier",
         .domain = kMlDomain,
         .since = 1,
         .create = create_svm_classifier,
         .takes_strings = true},
        infer_svm_classifier);
}

}  // namespace recur::reference
