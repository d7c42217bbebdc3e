// Registration functions of ml/: operators of the ai.onnx.ml domain.
#pragma once

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

inline constexpr const char* kMlDomain = "ai.onnx.ml";

void register_array_feature_extractor(Registrar& r);
void register_binarizer(Registrar& r);
void register_cast_map(Registrar& r);
void register_category_mapper(Registrar& r);
void register_dict_vectorizer(Registrar& r);
void register_feature_vectorizer(Registrar& r);
void register_imputer(Registrar& r);
void register_label_encoder(Registrar& r);
void register_linear_classifier(Registrar& r);
void register_linear_regressor(Registrar& r);
void register_normalizer(Registrar& r);
void register_one_hot_encoder(Registrar& r);
void register_scaler(Registrar& r);
void register_svm_classifier(Registrar& r);
void register_svm_regressor(Registrar& r);
void register_tree_ensemble(Registrar& r);
void register_tree_ensemble_classifier(Registrar& r);
void register_tree_ensemble_regressor(Registrar& r);
void register_zip_map(Registrar& r);

// Inference rule: output 0 is float with input 0's shape (Scaler, Normalizer).
Status infer_float_like_input0(InferContext& ctx);

}  // namespace recur::reference
