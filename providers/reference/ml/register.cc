#include "providers/reference/kernels.h"
#include "providers/reference/ml/ml_ops.h"

namespace recur::reference {

void register_ml_kernels(Registrar& r) {
  register_array_feature_extractor(r);
  register_binarizer(r);
  register_cast_map(r);
  register_category_mapper(r);
  register_dict_vectorizer(r);
  register_feature_vectorizer(r);
  register_imputer(r);
  register_label_encoder(r);
  register_linear_classifier(r);
  register_linear_regressor(r);
  register_normalizer(r);
  register_one_hot_encoder(r);
  register_scaler(r);
  register_svm_classifier(r);
  register_svm_regressor(r);
  register_tree_ensemble(r);
  register_tree_ensemble_classifier(r);
  register_tree_ensemble_regressor(r);
  register_zip_map(r);
}

}  // namespace recur::reference
