#include "runtime/engine/onnx/model_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include <onnx/onnx_pb.h>

#include "runtime/engine/onnx/function_inliner.h"
#include "runtime/engine/onnx/model_parse.h"
#include "runtime/engine/onnx/schema_check.h"
#include "runtime/engine/onnx/tensor_proto.h"

namespace recur {

namespace {

namespace fs = std::filesystem;

// The domains this runtime knows, with the opsets it accepts.
struct DomainRange {
  const char* domain;
  int min;
  int max;
};
constexpr DomainRange kDomains[] = {
    {"", 1, kMaxOnnxOpset},
    {"ai.onnx.ml", 1, kMaxMlOpset},
    {"ai.onnx.preview.training", 1, 1},        // optimizers and Gradient
    {"com.microsoft", 1, kMaxMicrosoftOpset},  // ONNX Runtime's contrib operators recur runs
    {"com.microsoft.nchwc", 1, 1},             // its blocked layout (lower_nchwc.cc)
};

const DomainRange* find_domain(const std::string& d) {
  const std::string key = d == "ai.onnx" ? "" : d;
  for (const auto& r : kDomains)
    if (key == r.domain) return &r;
  return nullptr;
}

// The chain of enclosing graphs while a subgraph is being read.
struct Scope {
  Graph* graph;
  const Scope* parent;
  std::string where;  // "subgraph 'body' of node 'loop' (Loop)"
};

class Loader {
 public:
  Loader(std::string file, ExternalData* external, const LoadOptions& options,
         std::vector<std::string>* warnings)
      : file_(std::move(file)), external_(external), options_(options), warnings_(warnings) {}

  Status read_graph(const onnx::GraphProto& gp, Graph& g, const Scope* parent,
                    const std::string& where);
  // The main graph, owned by the caller and not read again after loading: its initializers'
  // bytes are taken rather than copied (subgraphs' are few and small, and copied).
  void take_initializers_of(onnx::GraphProto* gp) { owned_ = gp; }

 private:
  // The steps of read_graph, in the order it takes them.
  Status read_graph_inputs(const onnx::GraphProto& gp, Graph& g, const std::string& pfx);
  Status read_initializers(const onnx::GraphProto& gp, Graph& g, const std::string& pfx);
  Status add_initializer(Graph& g, const std::string& name, Tensor t, const std::string& pfx);
  Status read_value_info(const onnx::GraphProto& gp, Graph& g);
  Result<Node> read_node(const onnx::NodeProto& np, int i, Scope& scope, const std::string& pfx);
  Status read_node_attributes(const onnx::NodeProto& np, Scope& scope, const std::string& pfx,
                              Node* node);
  // Values a subgraph captures become implicit inputs of the node that holds it.
  void add_captures(const Graph& sub, const Scope& scope, Node* node);
  Status read_graph_outputs(const onnx::GraphProto& gp, const Scope& scope, const std::string& pfx);
  Status read_type(const onnx::TypeProto& tp, const std::string& name, TypeInfo* out, bool strict);
  Status read_map_type(const onnx::TypeProto_Map& mt, const std::string& name, TypeInfo* out,
                       bool strict);
  Status read_attribute(const onnx::AttributeProto& ap, const Node& node, Scope& scope,
                        Attribute* out);
  // Finds `name` in `scope`'s graph or, failing that, in an enclosing graph, in which case it
  // becomes an outer reference of every graph in between.
  ValueId resolve(const Scope& scope, const std::string& name);
  std::string prefix(const std::string& where) const {
    return where.empty() ? file_ : file_ + ": " + where;
  }

  std::string file_;
  ExternalData* external_;
  LoadOptions options_;
  std::vector<std::string>* warnings_;
  onnx::GraphProto* owned_ = nullptr;
};

// A TensorProto element type code as a DType. Read as it stands, an unknown code would become
// a DType nothing can make or run, and the failure would come later without the value's name
// (or, in a sequence's elements, not at all): strict reading refuses it, and otherwise it is
// taken as unknown.
Result<DType> element_dtype(int32_t code, const std::string& name, bool strict) {
  if (code == 0 || known_tensor_dtype(code)) return static_cast<DType>(code);
  if (!strict) return DType::kUndefined;
  const std::string& spelled = onnx::TensorProto_DataType_Name(code);
  return not_implemented("'" + name + "' has element type " +
                         (spelled.empty() ? std::to_string(code) : spelled) +
                         ", which recur does not support");
}

// map(K, V) as the ai.onnx.ml operators use it: int64 or string keys, and values of one
// numeric or string element type.
Status Loader::read_map_type(const onnx::TypeProto_Map& mt, const std::string& name, TypeInfo* out,
                             bool strict) {
  const auto key = static_cast<DType>(mt.key_type());
  const onnx::TypeProto& value = mt.value_type();
  const auto value_dtype =
      static_cast<DType>(value.has_tensor_type() ? value.tensor_type().elem_type() : 0);
  if (key != DType::kInt64 && key != DType::kString) {
    if (!strict) return ok_status();
    return not_implemented("'" + name + "' is a map with " +
                           (known_tensor_dtype(mt.key_type())
                                ? std::string(dtype_name(key))
                                : "element type " + std::to_string(mt.key_type())) +
                           " keys; recur's maps have int64 or string keys");
  }
  if (!known_tensor_dtype(static_cast<int>(value_dtype)) || dtype_size(value_dtype) == 0) {
    if (!strict) return ok_status();
    return not_implemented("'" + name +
                           "' is a map whose values are not a numeric or string tensor type");
  }
  out->map_key_dtype = key;
  out->map_value_dtype = value_dtype;
  return ok_status();
}

Status Loader::read_type(const onnx::TypeProto& tp, const std::string& name, TypeInfo* out,
                         bool strict) {
  if (tp.has_optional_type()) {
    // optional(tensor) and optional(sequence(tensor)): the value's type, marked optional.
    const onnx::TypeProto& inner = tp.optional_type().elem_type();
    if (inner.has_tensor_type() || inner.has_sequence_type()) {
      RECUR_RETURN_IF_ERROR(read_type(inner, name, out, strict));
      out->optional = true;
      return ok_status();
    }
  }
  if (tp.has_sequence_type() && tp.sequence_type().elem_type().has_tensor_type()) {
    out->dtype = DType::kSequence;
    RECUR_ASSIGN_OR_RETURN(
        out->element_dtype,
        element_dtype(tp.sequence_type().elem_type().tensor_type().elem_type(), name, strict));
    out->shape.reset();
    return ok_status();
  }
  if (tp.has_map_type() ||
      (tp.has_sequence_type() && tp.sequence_type().elem_type().has_map_type())) {
    const bool in_sequence = tp.has_sequence_type();
    RECUR_RETURN_IF_ERROR(
        read_map_type(in_sequence ? tp.sequence_type().elem_type().map_type() : tp.map_type(), name,
                      out, strict));
    if (out->map_key_dtype == DType::kUndefined) return ok_status();  // not strict: unknown
    out->dtype = in_sequence ? DType::kSequence : DType::kMap;
    out->element_dtype = in_sequence ? DType::kMap : DType::kUndefined;
    out->shape.reset();
    return ok_status();
  }
  if (!tp.has_tensor_type()) {
    if (!strict || tp.value_case() == onnx::TypeProto::VALUE_NOT_SET) return ok_status();
    const char* kind = tp.has_sequence_type()   ? "a sequence of non-tensor"
                       : tp.has_optional_type() ? "an optional of a non-tensor"
                                                : "a non-tensor";
    return not_implemented("'" + name + "' has " + kind + " type; only tensors are supported");
  }
  const auto& tt = tp.tensor_type();
  RECUR_ASSIGN_OR_RETURN(out->dtype, element_dtype(tt.elem_type(), name, strict));
  if (tt.has_shape()) {
    out->shape.emplace();
    for (const auto& d : tt.shape().dim()) {
      Dim dim;
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) {
          return invalid_model("'" + name + "' declares a negative dimension");
        }
        dim.value = d.dim_value();
      } else if (d.has_dim_param()) {
        dim.symbol = d.dim_param();
      }
      out->shape->push_back(std::move(dim));
    }
  }
  return ok_status();
}

ValueId Loader::resolve(const Scope& scope, const std::string& name) {
  ValueId v = scope.graph->find(name);
  if (v != kNoValue) return v;
  if (!scope.parent) return kNoValue;
  const ValueId outer = resolve(*scope.parent, name);
  if (outer == kNoValue) return kNoValue;
  v = scope.graph->add_value(name, scope.parent->graph->value(outer).type);
  scope.graph->mutable_value(v).is_outer = true;
  scope.graph->add_outer_ref(v);
  return v;
}

Status Loader::read_attribute(const onnx::AttributeProto& ap, const Node& node, Scope& scope,
                              Attribute* a) {
  const std::string what = prefix(scope.where) + (scope.where.empty() ? ": " : ", ") +
                           node.describe() + " attribute '" + ap.name() + "'";
  if (!ap.ref_attr_name().empty()) {
    return invalid_model(what + " refers to attribute '" + ap.ref_attr_name() +
                         "' of an enclosing function, but it is in no model-local function");
  }
  using AP = onnx::AttributeProto;
  AP::AttributeType type = ap.type();
  if (type == AP::UNDEFINED) {
    // IR version 1 models leave the type out: take it from the field that is set.
    type = ap.has_f()              ? AP::FLOAT
           : ap.has_i()            ? AP::INT
           : ap.has_s()            ? AP::STRING
           : ap.has_t()            ? AP::TENSOR
           : ap.has_g()            ? AP::GRAPH
           : ap.has_tp()           ? AP::TYPE_PROTO
           : ap.floats_size() > 0  ? AP::FLOATS
           : ap.ints_size() > 0    ? AP::INTS
           : ap.strings_size() > 0 ? AP::STRINGS
           : ap.tensors_size() > 0 ? AP::TENSORS
           : ap.graphs_size() > 0  ? AP::GRAPHS
                                   : AP::UNDEFINED;
    if (type == AP::UNDEFINED) return invalid_model(what + " has no type and no value");
  }
  auto read_subgraph = [&](const onnx::GraphProto& gp) -> Result<std::shared_ptr<Graph>> {
    auto sub = std::make_shared<Graph>();
    sub->set_parent(scope.graph);
    const std::string where = "subgraph '" + ap.name() + "' of " + node.describe() +
                              (scope.where.empty() ? "" : " in " + scope.where);
    RECUR_RETURN_IF_ERROR(read_graph(gp, *sub, &scope, where));
    return sub;
  };
  switch (type) {
    case AP::FLOAT:
      a->type = AttrType::kFloat;
      a->f = ap.f();
      break;
    case AP::INT:
      a->type = AttrType::kInt;
      a->i = ap.i();
      break;
    case AP::STRING:
      a->type = AttrType::kString;
      a->s = ap.s();
      break;
    case AP::TENSOR: {
      a->type = AttrType::kTensor;
      RECUR_ASSIGN_OR_RETURN(a->t, tensor_from_proto(ap.t(), external_, what));
      break;
    }
    case AP::GRAPH: {
      a->type = AttrType::kGraph;
      RECUR_ASSIGN_OR_RETURN(a->g, read_subgraph(ap.g()));
      break;
    }
    case AP::FLOATS:
      a->type = AttrType::kFloats;
      a->floats.assign(ap.floats().begin(), ap.floats().end());
      break;
    case AP::INTS:
      a->type = AttrType::kInts;
      a->ints.assign(ap.ints().begin(), ap.ints().end());
      break;
    case AP::STRINGS:
      a->type = AttrType::kStrings;
      a->strings.assign(ap.strings().begin(), ap.strings().end());
      break;
    case AP::TENSORS:
      a->type = AttrType::kTensors;
      for (const auto& tp : ap.tensors()) {
        RECUR_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(tp, external_, what));
        a->tensors.push_back(std::move(t));
      }
      break;
    case AP::GRAPHS:
      a->type = AttrType::kGraphs;
      for (const auto& gp : ap.graphs()) {
        RECUR_ASSIGN_OR_RETURN(auto g, read_subgraph(gp));
        a->graphs.push_back(std::move(g));
      }
      break;
    case AP::TYPE_PROTO: {
      a->type = AttrType::kType;
      auto info = std::make_shared<TypeInfo>();
      RECUR_RETURN_IF_ERROR(read_type(ap.tp(), ap.name(), info.get(), true).with_context(what));
      a->type_info = std::move(info);
      break;
    }
    case AP::SPARSE_TENSOR: {
      // Held dense, as ONNX Runtime holds Constant's sparse_value.
      a->type = AttrType::kTensor;
      RECUR_ASSIGN_OR_RETURN(a->t, tensor_from_sparse_proto(ap.sparse_tensor(), external_, what));
      break;
    }
    default:
      return not_implemented(what + " has an unsupported type");
  }
  return ok_status();
}

// The value `name` defines in g, added if nothing has mentioned it yet.
Result<ValueId> define_value(Graph& g, const std::string& name, const char* kind,
                             const std::string& pfx) {
  if (name.empty()) return invalid_model(pfx + ": a " + std::string(kind) + " has no name");
  ValueId v = g.find(name);
  if (v == kNoValue) v = g.add_value(name);
  return v;
}

Status Loader::read_graph(const onnx::GraphProto& gp, Graph& g, const Scope* parent,
                          const std::string& where) {
  const std::string pfx = prefix(where);
  g.set_name(gp.name());
  Scope scope{&g, parent, where};

  // First every name this graph defines, so that subgraphs can capture values of nodes that
  // come later in the file.
  RECUR_RETURN_IF_ERROR(read_graph_inputs(gp, g, pfx));
  RECUR_RETURN_IF_ERROR(read_initializers(gp, g, pfx));
  for (int i = 0; i < gp.node_size(); ++i) {
    for (const auto& out : gp.node(i).output()) {
      if (out.empty()) continue;
      if (g.find(out) == kNoValue) g.add_value(out);
    }
  }
  RECUR_RETURN_IF_ERROR(read_value_info(gp, g));

  for (int i = 0; i < gp.node_size(); ++i) {
    RECUR_ASSIGN_OR_RETURN(Node node, read_node(gp.node(i), i, scope, pfx));
    g.add_node(std::move(node));
  }
  RECUR_RETURN_IF_ERROR(read_graph_outputs(gp, scope, pfx));
  return g.finalize().with_context(pfx);
}

Status Loader::read_graph_inputs(const onnx::GraphProto& gp, Graph& g, const std::string& pfx) {
  for (const auto& in : gp.input()) {
    RECUR_ASSIGN_OR_RETURN(ValueId v, define_value(g, in.name(), "graph input", pfx));
    // A second declaration would make one value two inputs, and the run would then ask for a
    // feed the user had given (ONNX's checker refuses it as a break of SSA form).
    if (g.value(v).is_graph_input) {
      return invalid_model(pfx + ": graph input '" + in.name() + "' is listed twice");
    }
    RECUR_RETURN_IF_ERROR(read_type(in.type(), in.name(), &g.mutable_value(v).type, true)
                              .with_context(pfx + ": graph input"));
    if (in.type().has_tensor_type() && in.type().tensor_type().elem_type() == 0) {
      return invalid_model(pfx + ": graph input '" + in.name() + "' declares no element type");
    }
    g.add_input(v);
  }
  return ok_status();
}

Status Loader::read_initializers(const onnx::GraphProto& gp, Graph& g, const std::string& pfx) {
  onnx::GraphProto* owned = &gp == owned_ ? owned_ : nullptr;
  for (int i = 0; i < gp.initializer_size(); ++i) {
    const onnx::TensorProto& init = gp.initializer(i);
    const std::string what = pfx + ": initializer '" + init.name() + "'";
    RECUR_ASSIGN_OR_RETURN(
        Tensor t, owned ? tensor_from_proto_taking(owned->mutable_initializer(i), external_, what)
                        : tensor_from_proto(init, external_, what));
    RECUR_RETURN_IF_ERROR(add_initializer(g, init.name(), std::move(t), pfx));
  }
  // A sparse initializer is named by its values tensor; recur holds it dense, as ONNX Runtime
  // does.
  for (const auto& sp : gp.sparse_initializer()) {
    const std::string& name = sp.values().name();
    RECUR_ASSIGN_OR_RETURN(
        Tensor t,
        tensor_from_sparse_proto(sp, external_, pfx + ": sparse initializer '" + name + "'"));
    RECUR_RETURN_IF_ERROR(add_initializer(g, name, std::move(t), pfx));
  }
  return ok_status();
}

Status Loader::add_initializer(Graph& g, const std::string& name, Tensor t,
                               const std::string& pfx) {
  RECUR_ASSIGN_OR_RETURN(ValueId v, define_value(g, name, "initializer", pfx));
  if (g.value(v).is_initializer) {
    return invalid_model(pfx + ": initializer '" + name + "' is defined twice");
  }
  const TypeInfo declared = g.value(v).type;
  if (g.value(v).is_graph_input && declared.dtype != DType::kUndefined &&
      declared.dtype != t.dtype()) {
    return invalid_model(pfx + ": initializer '" + name + "' is " +
                         std::string(dtype_name(t.dtype())) + " but the graph input says " +
                         std::string(dtype_name(declared.dtype)));
  }
  g.set_initializer(v, std::move(t));
  if (g.value(v).is_graph_input && declared.dtype != DType::kUndefined) {
    // The initializer is only the default of an overridable input: the declaration, with
    // its symbolic or absent dimensions, says what may be fed.
    g.mutable_value(v).type = declared;
  }
  return ok_status();
}

Status Loader::read_value_info(const onnx::GraphProto& gp, Graph& g) {
  for (const auto& vi : gp.value_info()) {
    ValueId v = g.find(vi.name());
    if (v == kNoValue) continue;  // describes a value nothing defines: ignore
    TypeInfo t;
    RECUR_RETURN_IF_ERROR(read_type(vi.type(), vi.name(), &t, false));
    if (!g.value(v).is_initializer && !g.value(v).is_graph_input) g.mutable_value(v).type = t;
  }
  return ok_status();
}

Result<Node> Loader::read_node(const onnx::NodeProto& np, int i, Scope& scope,
                               const std::string& pfx) {
  Graph& g = *scope.graph;
  Node node;
  node.op_type = np.op_type();
  node.domain = np.domain() == "ai.onnx" ? "" : np.domain();
  node.name = np.name().empty() ? np.op_type() + "_" + std::to_string(i) : np.name();
  if (node.op_type.empty()) {
    return invalid_model(pfx + ": node " + std::to_string(i) +
                         (np.name().empty() ? "" : " ('" + np.name() + "')") + " has no op_type");
  }
  const DomainRange* dom = find_domain(node.domain);
  if (!dom) {
    return not_implemented(pfx + ": " + node.describe() + " uses the unknown domain '" +
                           node.domain + "'");
  }
  node.opset = g.opset(node.domain);
  if (node.opset == 0) {
    return invalid_model(pfx + ": " + node.describe() + " uses domain '" + node.domain +
                         "', which the model does not import");
  }
  for (const auto& in : np.input()) {
    if (in.empty()) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    const ValueId v = resolve(scope, in);
    if (v == kNoValue) {
      return invalid_model(pfx + ": " + node.describe() + " reads '" + in +
                           "', which does not exist");
    }
    node.inputs.push_back(v);
  }
  for (const auto& out : np.output()) node.outputs.push_back(out.empty() ? kNoValue : g.find(out));
  RECUR_RETURN_IF_ERROR(read_node_attributes(np, scope, pfx, &node));
  // The node as the file has it: the optimizer's rewrites come later and are not checked.
  const size_t warned = warnings_->size();
  RECUR_RETURN_IF_ERROR(check_node_schema(node, pfx, options_.strict_schema, warnings_));
  for (size_t w = warned; w < warnings_->size(); ++w) node.notes.push_back((*warnings_)[w]);
  return node;
}

Status Loader::read_node_attributes(const onnx::NodeProto& np, Scope& scope, const std::string& pfx,
                                    Node* node) {
  for (const auto& ap : np.attribute()) {
    if (ap.name().empty()) {
      return invalid_model(pfx + ": " + node->describe() + " has an attribute with no name");
    }
    Attribute a;
    RECUR_RETURN_IF_ERROR(read_attribute(ap, *node, scope, &a));
    if (a.g) add_captures(*a.g, scope, node);
    for (const auto& sg : a.graphs) add_captures(*sg, scope, node);
    if (!node->attributes.emplace(ap.name(), std::move(a)).second) {
      // Which one a kernel would read is arbitrary; ONNX's checker refuses it too.
      return invalid_model(pfx + ": " + node->describe() + ": attribute '" + ap.name() +
                           "' is given twice");
    }
  }
  return ok_status();
}

void Loader::add_captures(const Graph& sub, const Scope& scope, Node* node) {
  for (ValueId r : sub.outer_refs()) {
    const ValueId here = resolve(scope, sub.value(r).name);
    if (here != kNoValue && std::find(node->implicit_inputs.begin(), node->implicit_inputs.end(),
                                      here) == node->implicit_inputs.end()) {
      node->implicit_inputs.push_back(here);
    }
  }
}

Status Loader::read_graph_outputs(const onnx::GraphProto& gp, const Scope& scope,
                                  const std::string& pfx) {
  Graph& g = *scope.graph;
  for (const auto& out : gp.output()) {
    const ValueId v = resolve(scope, out.name());
    if (v == kNoValue) {
      return invalid_model(pfx + ": graph output '" + out.name() + "' is never produced");
    }
    TypeInfo declared;
    RECUR_RETURN_IF_ERROR(
        read_type(out.type(), out.name(), &declared, true).with_context(pfx + ": graph output"));
    Value& val = g.mutable_value(v);
    if (val.type.dtype == DType::kUndefined) {
      val.type.dtype = declared.dtype;
      val.type.element_dtype = declared.element_dtype;
      val.type.map_key_dtype = declared.map_key_dtype;
      val.type.map_value_dtype = declared.map_value_dtype;
    }
    if (!val.type.shape) val.type.shape = declared.shape;
    val.type.optional = val.type.optional || declared.optional;
    g.add_output(v);
  }
  return ok_status();
}

// The op types of `domain` in `g` and its subgraphs, for the message that refuses an opset.
void op_types_in(const onnx::GraphProto& g, const std::string& domain, std::set<std::string>* out) {
  for (const auto& n : g.node()) {
    const std::string d = n.domain() == "ai.onnx" ? "" : n.domain();
    if (d == domain && out->size() < 64) out->insert(n.op_type());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) op_types_in(a.g(), domain, out);
      for (const auto& sg : a.graphs()) op_types_in(sg, domain, out);
    }
  }
}

ModelMetadata read_metadata(const onnx::ModelProto& mp, const std::string& file,
                            std::vector<std::string>* warnings) {
  ModelMetadata md;
  md.producer_name = mp.producer_name();
  md.producer_version = mp.producer_version();
  md.domain = mp.domain();
  md.description = mp.doc_string();
  md.version = mp.model_version();
  md.graph_name = mp.graph().name();
  md.graph_description = mp.graph().doc_string();
  md.ir_version = mp.ir_version();
  for (const auto& op : mp.opset_import()) {
    md.opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = op.version();
  }
  for (const auto& prop : mp.metadata_props()) {
    auto [it, added] = md.custom.insert_or_assign(prop.key(), prop.value());
    if (!added) {
      warnings->push_back(file + ": metadata_props has the key '" + prop.key() +
                          "' more than once; the last value is kept");
    }
  }
  return md;
}

Result<Model> load_proto(onnx::ModelProto& mp, const std::string& base_dir, const std::string& file,
                         const LoadOptions& options) {
  if (mp.ir_version() <= 0) return invalid_model(file + ": no ir_version: not an ONNX model");
  // IR version 13 is ONNX 1.20's and 1.21's, the newest ONNX Runtime 1.30 reads. A newer one
  // may change what fields mean, so it is refused rather than read as if it were known.
  constexpr int64_t kMaxIrVersion = 13;
  if (mp.ir_version() > kMaxIrVersion) {
    return not_implemented(file + ": IR version " + std::to_string(mp.ir_version()) +
                           " is newer than this build knows (up to " +
                           std::to_string(kMaxIrVersion) + ")");
  }
  if (!mp.has_graph()) return invalid_model(file + ": the model has no graph");
  std::map<std::string, int> opsets;
  if (mp.opset_import_size() == 0) {
    // IR versions 1 and 2 had no opset_import and mean opset 1; from IR version 3 the field
    // is required, and guessing an opset would run nodes under rules the model never chose.
    if (mp.ir_version() >= 3) {
      return invalid_model(file +
                           ": no opset_import (required from IR version 3): the model "
                           "does not say which operator set its nodes follow");
    }
    opsets[""] = 1;
  }
  // The model's imports, then those its functions add as they are inlined.
  const auto check_imports = [&](int from) -> Status {
    for (int i = from; i < mp.opset_import_size(); ++i) {
      const auto& op = mp.opset_import(i);
      const std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
      const DomainRange* dom = find_domain(domain);
      if (dom && (op.version() < dom->min || op.version() > dom->max)) {
        std::set<std::string> ops;
        op_types_in(mp.graph(), domain, &ops);
        std::string listed;
        for (const auto& o : ops) listed += (listed.empty() ? "" : ", ") + o;
        return not_implemented(
            file + ": opset " + std::to_string(op.version()) + " of domain '" +
            (domain.empty() ? "ai.onnx" : domain) + "' is not supported (this build knows opsets " +
            std::to_string(dom->min) + " to " + std::to_string(dom->max) + ")" +
            (listed.empty() ? "" : "; the model's nodes of that domain: " + listed));
      }
      // Unknown domains are accepted here and refused where a node uses one.
      opsets[domain] = static_cast<int>(op.version());
    }
    return ok_status();
  };
  RECUR_RETURN_IF_ERROR(check_imports(0));
  Model m;
  m.metadata = read_metadata(mp, file, &m.warnings);
  const int imported = mp.opset_import_size();
  RECUR_RETURN_IF_ERROR(inline_local_functions(mp, file, options.strict_schema, &m.warnings));
  RECUR_RETURN_IF_ERROR(check_imports(imported));
  m.path = file;
  m.graph = std::make_shared<Graph>();
  m.graph->set_opsets(opsets);
  ExternalData external{fs::path(base_dir)};
  Loader loader(file, &external, options, &m.warnings);
  loader.take_initializers_of(mp.mutable_graph());
  RECUR_RETURN_IF_ERROR(loader.read_graph(mp.graph(), *m.graph, nullptr, ""));
  if (m.graph->outputs().empty()) {
    return invalid_model(file + ": the graph has no outputs, so running it computes nothing");
  }
  return m;
}

Status parse_model(const char* data, size_t size, const ParseOptions& parse,
                   const std::string& display_name, onnx::ModelProto* mp) {
  switch (parse_model_proto(data, size, parse, mp)) {
    case ParseResult::kParsed:
      return ok_status();
    case ParseResult::kTooDeep:
      return invalid_model(display_name +
                           ": not a valid ONNX model: its messages nest deeper than the 100 "
                           "levels protobuf parses (subgraphs in subgraphs: about 33 nested If, "
                           "Loop or Scan bodies)");
    case ParseResult::kInvalid:
      break;
  }
  return invalid_model(display_name +
                       ": not a valid ONNX model (the protobuf could not be parsed; is the "
                       "file truncated or not a .onnx file?)");
}

}  // namespace

Result<Model> load_model_from_bytes(const void* data, size_t size, const std::string& base_dir,
                                    const std::string& display_name, const LoadOptions& options) {
  if (size > static_cast<size_t>(INT32_MAX)) {
    return invalid_model(display_name + ": larger than 2 GiB; keep weights in external data");
  }
  onnx::ModelProto mp;
  RECUR_RETURN_IF_ERROR(
      parse_model(static_cast<const char*>(data), size, ParseOptions{}, display_name, &mp));
  return load_proto(mp, base_dir, display_name, options);
}

Result<Model> load_model(const std::string& path, const LoadOptions& options) {
  RECUR_ASSIGN_OR_RETURN(const int fd, open_regular_file(path, "the model file"));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return io_error("cannot stat the model file '" + path + "'");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* p = size ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
  ::close(fd);
  if (size && p == MAP_FAILED) return io_error(path + ": cannot map the model file");
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  if (size > static_cast<size_t>(INT32_MAX)) {
    ::munmap(p, size);
    return invalid_model(path + ": larger than 2 GiB; keep weights in external data");
  }
  if (size) ::madvise(p, size, MADV_SEQUENTIAL);
  ParseOptions parse;
  parse.may_discard = true;
  onnx::ModelProto mp;
  const Status parsed = parse_model(static_cast<const char*>(p), size, parse, path, &mp);
  if (size) ::munmap(p, size);
  RECUR_RETURN_IF_ERROR(parsed);
  return load_proto(mp, dir.string(), path, options);
}

}  // namespace recur
