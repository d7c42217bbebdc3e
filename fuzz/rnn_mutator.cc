// Structure-aware mutator for fuzz_rnn_model: parses the ModelProto, edits one LSTM, GRU, RNN
// or DynamicQuantizeLSTM node (its attributes, the shapes, dtypes and contents of its initializers,
// sequence_lens, the declared input shapes) and reserializes. Byte-level mutation of a protobuf
// mostly breaks the encoding and tests the parser; these edits keep the model well-formed so that
// the loader's checks, the planner and the kernels are what get tested. Inputs that do not parse,
// hold no RNN node, or one time in eight, get libFuzzer's own mutation.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using Rng = std::mt19937_64;

template <class T, size_t N>
const T& pick(Rng& rng, const T (&items)[N]) {
  return items[rng() % N];
}

int64_t interesting_int(Rng& rng) {
  static const int64_t kValues[] = {0,         1,         2,         3,         4,      5,   7,
                                    8,         16,        -1,        -2,        255,    256, 65535,
                                    INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, 1 << 20};
  return pick(rng, kValues);
}

float interesting_float(Rng& rng) {
  static const float kValues[] = {0.0f,
                                  -0.0f,
                                  1.0f,
                                  -1.0f,
                                  0.5f,
                                  1e-30f,
                                  1e30f,
                                  3.4e38f,
                                  std::numeric_limits<float>::infinity(),
                                  -std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::quiet_NaN(),
                                  std::numeric_limits<float>::denorm_min()};
  return pick(rng, kValues);
}

onnx::AttributeProto* find_or_add(onnx::NodeProto* node, const std::string& name) {
  for (auto& a : *node->mutable_attribute())
    if (a.name() == name) return &a;
  auto* a = node->add_attribute();
  a->set_name(name);
  return a;
}

void set_int(onnx::NodeProto* node, const std::string& name, int64_t v) {
  auto* a = find_or_add(node, name);
  a->Clear();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void mutate_attribute(onnx::NodeProto* node, Rng& rng) {
  static const char* kActivations[] = {"Sigmoid",
                                       "Tanh",
                                       "Relu",
                                       "Affine",
                                       "LeakyRelu",
                                       "ThresholdedRelu",
                                       "ScaledTanh",
                                       "HardSigmoid",
                                       "Elu",
                                       "Softsign",
                                       "Softplus",
                                       "Bogus",
                                       ""};
  static const char* kDirections[] = {"forward", "reverse", "bidirectional", "", "sideways"};
  switch (rng() % 10) {
    case 0:
      set_int(node, "hidden_size", rng() % 2 ? interesting_int(rng) : rng() % 9);
      break;
    case 1: {
      auto* a = find_or_add(node, "direction");
      a->Clear();
      a->set_name("direction");
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(pick(rng, kDirections));
      break;
    }
    case 2:
      set_int(node, "layout", rng() % 2 ? interesting_int(rng) : rng() % 3);
      break;
    case 3: {
      auto* a = find_or_add(node, "clip");
      a->Clear();
      a->set_name("clip");
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(interesting_float(rng));
      break;
    }
    case 4: {
      auto* a = find_or_add(node, "activations");
      a->Clear();
      a->set_name("activations");
      a->set_type(onnx::AttributeProto::STRINGS);
      for (size_t n = rng() % 8; n > 0; --n) a->add_strings(pick(rng, kActivations));
      break;
    }
    case 5:
    case 6: {
      const std::string name = rng() % 2 ? "activation_alpha" : "activation_beta";
      auto* a = find_or_add(node, name);
      a->Clear();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::FLOATS);
      for (size_t n = rng() % 8; n > 0; --n) a->add_floats(interesting_float(rng));
      break;
    }
    case 7:
      set_int(node, "input_forget", rng() % 2 ? interesting_int(rng) : rng() % 2);
      break;
    case 8:
      set_int(node, "linear_before_reset", rng() % 2 ? interesting_int(rng) : rng() % 2);
      break;
    default:
      // Drop one attribute, or give one the wrong type.
      if (node->attribute_size() > 0) {
        const int i = static_cast<int>(rng() % node->attribute_size());
        if (rng() % 2) {
          node->mutable_attribute()->DeleteSubrange(i, 1);
        } else {
          auto* a = node->mutable_attribute(i);
          const std::string name = a->name();
          a->Clear();
          a->set_name(name);
          a->set_type(onnx::AttributeProto::FLOATS);
          a->add_floats(interesting_float(rng));
        }
      }
      break;
  }
}

onnx::TensorProto* initializer(onnx::GraphProto* g, const std::string& name) {
  for (auto& t : *g->mutable_initializer())
    if (!name.empty() && t.name() == name) return &t;
  return nullptr;
}

// One of the node's inputs that has an initializer (W, R, B, sequence_lens, initial_h, ...).
onnx::TensorProto* node_initializer(onnx::GraphProto* g, const onnx::NodeProto& node, Rng& rng) {
  std::vector<onnx::TensorProto*> found;
  for (const auto& in : node.input())
    if (auto* t = initializer(g, in)) found.push_back(t);
  return found.empty() ? nullptr : found[rng() % found.size()];
}

void mutate_initializer_shape(onnx::TensorProto* t, Rng& rng) {
  auto* dims = t->mutable_dims();
  switch (rng() % 4) {
    case 0:
      if (!dims->empty()) dims->Set(static_cast<int>(rng() % dims->size()), rng() % 5);
      break;
    case 1:
      if (!dims->empty()) {
        dims->Set(static_cast<int>(rng() % dims->size()), interesting_int(rng));
      }
      break;
    case 2:
      dims->Add(static_cast<int64_t>(rng() % 3));
      break;
    default:
      if (!dims->empty()) dims->RemoveLast();
      break;
  }
}

void mutate_initializer_dtype(onnx::TensorProto* t, Rng& rng) {
  static const int32_t kTypes[] = {0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 16, 17, 21, 22, 99};
  t->set_data_type(pick(rng, kTypes));
}

// Overwrites a few elements: raw bytes with special floats or integers, or the typed fields.
void mutate_initializer_contents(onnx::TensorProto* t, Rng& rng) {
  if (!t->raw_data().empty()) {
    std::string& raw = *t->mutable_raw_data();
    const bool floats = t->data_type() == onnx::TensorProto::FLOAT;
    for (int n = 1 + static_cast<int>(rng() % 4); n > 0; --n) {
      if (floats && raw.size() >= 4) {
        const float f = interesting_float(rng);
        std::memcpy(&raw[(rng() % (raw.size() / 4)) * 4], &f, 4);
      } else if (raw.size() >= 4) {
        const auto v = static_cast<int32_t>(interesting_int(rng));
        std::memcpy(&raw[(rng() % (raw.size() / 4)) * 4], &v, 4);
      }
    }
    if (rng() % 8 == 0) raw.resize(rng() % (raw.size() + 8));
    return;
  }
  if (t->float_data_size() > 0) {
    t->set_float_data(static_cast<int>(rng() % t->float_data_size()), interesting_float(rng));
  } else if (t->int32_data_size() > 0) {
    t->set_int32_data(static_cast<int>(rng() % t->int32_data_size()),
                      static_cast<int32_t>(interesting_int(rng)));
  } else if (t->int64_data_size() > 0) {
    t->set_int64_data(static_cast<int>(rng() % t->int64_data_size()), interesting_int(rng));
  } else {
    t->add_float_data(interesting_float(rng));
  }
}

// sequence_lens (input 4): lengths beyond the sequence, negative, zero, or the input dropped
// or added.
void mutate_sequence_lens(onnx::GraphProto* g, onnx::NodeProto* node, Rng& rng) {
  while (node->input_size() < 5) node->add_input("");
  if (rng() % 4 == 0) {
    node->set_input(4, "");
    return;
  }
  std::string name = node->input(4);
  onnx::TensorProto* t = initializer(g, name);
  if (!t) {
    name = "fuzz_sequence_lens";
    node->set_input(4, name);
    t = initializer(g, name);
    if (!t) {
      t = g->add_initializer();
      t->set_name(name);
    }
  }
  t->Clear();
  t->set_name(name);
  t->set_data_type(rng() % 8 ? onnx::TensorProto::INT32 : onnx::TensorProto::INT64);
  const int64_t batch = static_cast<int64_t>(rng() % 4);
  t->add_dims(rng() % 8 ? batch : batch + 1);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t v = rng() % 2 ? static_cast<int64_t>(rng() % 6) : interesting_int(rng);
    if (t->data_type() == onnx::TensorProto::INT32) {
      t->add_int32_data(static_cast<int32_t>(v));
    } else {
      t->add_int64_data(v);
    }
  }
}

// A declared graph input's shape or element type.
void mutate_graph_input(onnx::GraphProto* g, Rng& rng) {
  if (g->input_size() == 0) return;
  auto* type = g->mutable_input(static_cast<int>(rng() % g->input_size()))->mutable_type();
  if (!type->has_tensor_type()) return;
  auto* tt = type->mutable_tensor_type();
  if (rng() % 5 == 0) {
    static const int32_t kTypes[] = {1, 6, 7, 9, 10, 11, 16};
    tt->set_elem_type(pick(rng, kTypes));
    return;
  }
  auto* shape = tt->mutable_shape();
  switch (rng() % 4) {
    case 0:
      if (shape->dim_size() > 0) {
        shape->mutable_dim(static_cast<int>(rng() % shape->dim_size()))
            ->set_dim_value(static_cast<int64_t>(rng() % 5));
      }
      break;
    case 1:
      if (shape->dim_size() > 0) {
        shape->mutable_dim(static_cast<int>(rng() % shape->dim_size()))->set_dim_param("N");
      }
      break;
    case 2:
      shape->add_dim()->set_dim_value(static_cast<int64_t>(1 + rng() % 2));
      break;
    default:
      if (shape->dim_size() > 0) shape->mutable_dim()->RemoveLast();
      break;
  }
}

// Optional inputs dropped ("") or node inputs swapped, which changes which tensor plays W/R/B.
void mutate_node_inputs(onnx::NodeProto* node, Rng& rng) {
  if (node->input_size() < 2) return;
  const int i = static_cast<int>(rng() % node->input_size());
  if (rng() % 2 && i >= 3) {
    node->set_input(i, "");
  } else {
    const int j = static_cast<int>(rng() % node->input_size());
    const std::string a = node->input(i);
    node->set_input(i, node->input(j));
    node->set_input(j, a);
  }
}

bool is_rnn(const onnx::NodeProto& n) {
  return n.op_type() == "LSTM" || n.op_type() == "GRU" || n.op_type() == "RNN" ||
         n.op_type() == "DynamicQuantizeLSTM";
}

// DynamicQuantizeLSTM's quantization inputs (8 to 11: W_scale, W_zero_point, R_scale,
// R_zero_point): a scale per tensor or per channel, a scale that is zero, negative, not finite
// or merely large, a zero point off zero, or int8 and uint8 swapped between the weights and
// their zero points. The generic edits rarely reach these: the scales must stay small and the
// types must match for the int8 kernel to run at all.
void mutate_quantization(onnx::GraphProto* g, onnx::NodeProto* node, Rng& rng) {
  if (node->input_size() < 12) return;
  const bool recurrent = rng() % 2;
  onnx::TensorProto* scale = initializer(g, node->input(recurrent ? 10 : 8));
  onnx::TensorProto* zero_point = initializer(g, node->input(recurrent ? 11 : 9));
  onnx::TensorProto* weights = initializer(g, node->input(recurrent ? 2 : 1));
  switch (rng() % 4) {
    case 0: {
      // Per direction ([D], one value for every column), or a shape that must be refused:
      // [D, 1], [D, 2], or scale and zero point of different shapes.
      const int shape = static_cast<int>(rng() % 4);
      for (auto* t : {scale, zero_point}) {
        if (!t || t->dims_size() == 0 || (shape == 3 && t == zero_point)) continue;
        if (shape == 0 || shape == 3) {
          if (t->dims_size() > 1) t->mutable_dims()->RemoveLast();
        } else {
          t->set_dims(t->dims_size() - 1, shape);
        }
        // Other edits leave any dims: the contents follow only a shape of modest size.
        int64_t n = 1;
        for (const int64_t d : t->dims())
          n = n < 0 || d < 0 || d > (1 << 20) ? -1 : std::min<int64_t>(n * d, 1 << 21);
        const size_t bytes = t->data_type() == onnx::TensorProto::FLOAT ? 4 : 1;
        if (!t->raw_data().empty() && n >= 0 && n < (1 << 20))
          t->mutable_raw_data()->resize(bytes * static_cast<size_t>(n));
      }
      break;
    }
    case 1:
      if (scale && scale->raw_data().size() >= 4) {
        std::string& raw = *scale->mutable_raw_data();
        const float f =
            rng() % 2 ? interesting_float(rng) : static_cast<float>(rng() % 1000) * 1e-4f;
        std::memcpy(&raw[(rng() % (raw.size() / 4)) * 4], &f, 4);
      }
      break;
    case 2:
      if (zero_point && !zero_point->raw_data().empty()) {
        std::string& raw = *zero_point->mutable_raw_data();
        raw[rng() % raw.size()] = static_cast<char>(rng() % 2 ? rng() : 1 + rng() % 3);
      }
      break;
    default: {
      const auto other = [](int32_t t) {
        return t == onnx::TensorProto::INT8 ? onnx::TensorProto::UINT8 : onnx::TensorProto::INT8;
      };
      for (auto* t : {weights, zero_point})
        if (t && (t == weights || rng() % 2)) t->set_data_type(other(t->data_type()));
      break;
    }
  }
}

bool mutate_model(onnx::ModelProto* m, Rng& rng) {
  auto* g = m->mutable_graph();
  std::vector<onnx::NodeProto*> rnns;
  for (auto& n : *g->mutable_node())
    if (is_rnn(n)) rnns.push_back(&n);
  if (rnns.empty()) return false;
  onnx::NodeProto* node = rnns[rng() % rnns.size()];
  if (node->op_type() == "DynamicQuantizeLSTM" && rng() % 4 == 0) {
    mutate_quantization(g, node, rng);
    return true;
  }
  switch (rng() % 8) {
    case 0:
    case 1:
      mutate_attribute(node, rng);
      break;
    case 2:
      if (auto* t = node_initializer(g, *node, rng)) mutate_initializer_shape(t, rng);
      break;
    case 3:
      if (auto* t = node_initializer(g, *node, rng)) mutate_initializer_dtype(t, rng);
      break;
    case 4:
      if (auto* t = node_initializer(g, *node, rng)) mutate_initializer_contents(t, rng);
      break;
    case 5:
      mutate_sequence_lens(g, node, rng);
      break;
    case 6:
      mutate_graph_input(g, rng);
      break;
    default:
      mutate_node_inputs(node, rng);
      break;
  }
  return true;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  Rng rng(seed);
  onnx::ModelProto model;
  if (rng() % 8 != 0 && model.ParseFromArray(data, static_cast<int>(size)) &&
      mutate_model(&model, rng)) {
    std::string out;
    if (model.SerializeToString(&out) && out.size() <= max_size) {
      std::memcpy(data, out.data(), out.size());
      return out.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
