// What the ai.onnx.ml scorers (LinearClassifier, LinearRegressor, SVM*, TreeEnsemble*) share:
// reading X as float rows, post_transform, and class labels.
//
// X of these operators is float, double, int32 or int64, [N, C] or [C] (one row); they score
// in float, as ONNX Runtime does, so a double X is rounded to float first.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "recur/tensor.h"
#include "runtime/core/status.h"
#include "runtime/graph/graph.h"
#include "runtime/graph/shape_inference.h"
#include "runtime/provider/kernel.h"

namespace recur::reference::ml {

enum class PostTransform { kNone, kSoftmax, kLogistic, kSoftmaxZero, kProbit };

// The post_transform attribute (a string, NONE where absent).
Result<PostTransform> read_post_transform(const Node& node);

// Applies `t` to one row of n scores in place. PROBIT uses the same closed-form erf inverse as
// ONNX Runtime and the ONNX reference implementation (Winitzki's, a = 0.147), so the scores agree
// with theirs to float precision rather than to the approximation's 1e-3.
void post_transform_row(PostTransform t, float* scores, int64_t n);
float probit(float p);

// X as N rows of C floats. Rank 1 is one row; other ranks are refused, naming X's shape. A
// float X is read in place; the other dtypes are converted into `converted`.
struct FeatureRows {
  int64_t rows = 0;
  int64_t cols = 0;
  const float* data = nullptr;  // rows * cols
  std::vector<float> converted;
  const float* row(int64_t r) const { return data + r * cols; }
};
Status read_feature_rows(const KernelContext& ctx, const Tensor& x, FeatureRows* out);

// classlabels_ints or classlabels_strings (the attribute names differ between operators).
struct ClassLabels {
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  bool use_strings = false;
  int64_t size() const { return static_cast<int64_t>(use_strings ? strings.size() : ints.size()); }
};
Result<ClassLabels> read_class_labels(const Node& node, const char* ints_name,
                                      const char* strings_name);
// The label output: int64 or string, [rows].
Result<Tensor*> allocate_labels(KernelContext& ctx, const ClassLabels& labels, int64_t rows);
void set_label(Tensor& y, int64_t row, const ClassLabels& labels, int64_t index);

// Inference for a scorer: output `labels_output` (or none, -1) is the labels [N] and
// `scores_output` the float scores [N, n_scores] (n_scores < 0: unknown).
Status infer_scorer(InferContext& ctx, const ClassLabels* labels, int labels_output,
                    int scores_output, int64_t n_scores);

}  // namespace recur::reference::ml
