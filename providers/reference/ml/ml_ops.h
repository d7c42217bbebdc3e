// Registration functions of ml/: operators of the ai.onnx.ml domain.
#pragma once

#include "providers/reference/common/registrar.h"
#include "runtime/provider/execution_provider.h"

namespace recur::reference {

inline constexpr const char* kMlDomain = "ai.onnx.ml";

void register_array_feature_extractor(Registrar& r);
void register_binarizer(Registrar& r);
void register_category_mapper(Registrar& r);
void register_label_encoder(Registrar& r);
void register_tree_ensemble(Registrar& r);

}  // namespace recur::reference
