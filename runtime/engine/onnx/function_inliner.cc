#include "runtime/engine/onnx/function_inliner.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <google/protobuf/unknown_field_set.h>
#include <onnx/onnx_pb.h>

#include "runtime/engine/onnx/schema_check.h"

namespace recur {

namespace {

using google::protobuf::RepeatedPtrField;
using AP = onnx::AttributeProto;

// Fields ONNX added after 1.12, the onnx.proto this build may be compiled against. Where the
// generated classes lack them, protobuf keeps them among the unknown fields.
constexpr int kNodeOverload = 8;             // NodeProto.overload, IR version 10
constexpr int kFunctionAttributeProto = 11;  // FunctionProto.attribute_proto, IR version 9
constexpr int kFunctionOverload = 13;        // FunctionProto.overload, IR version 10

// A model whose expansion passes this many nodes is refused before anything is expanded: a few
// functions that each call the next twice would otherwise fill the memory.
constexpr size_t kMaxInlinedNodes = size_t{1} << 20;

// The length-delimited payloads of field `number` of `m`, known to the generated class or not.
std::vector<std::string> field_payloads(const google::protobuf::Message& m, int number) {
  std::vector<std::string> out;
  const auto* refl = m.GetReflection();
  if (const auto* f = m.GetDescriptor()->FindFieldByNumber(number)) {
    if (f->is_repeated()) {
      for (int i = 0; i < refl->FieldSize(m, f); ++i) {
        out.push_back(f->cpp_type() == f->CPPTYPE_STRING
                          ? refl->GetRepeatedString(m, f, i)
                          : refl->GetRepeatedMessage(m, f, i).SerializeAsString());
      }
    } else if (refl->HasField(m, f) && f->cpp_type() == f->CPPTYPE_STRING) {
      out.push_back(refl->GetString(m, f));
    }
    return out;
  }
  const auto& unknown = refl->GetUnknownFields(m);
  for (int i = 0; i < unknown.field_count(); ++i) {
    const auto& u = unknown.field(i);
    if (u.number() == number && u.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      out.push_back(u.length_delimited());
  }
  return out;
}

std::string overload_of(const google::protobuf::Message& m, int number) {
  auto v = field_payloads(m, number);
  return v.empty() ? std::string() : v.back();
}

std::string normal_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

std::string key_of(const std::string& domain, const std::string& name,
                   const std::string& overload) {
  return normal_domain(domain) + '\n' + name + '\n' + overload;
}

std::string spelled_domain(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

// Calls f on each graph attribute of `n` (If's branches, Loop's and Scan's bodies), stopping at
// the first error.
template <class F>
Status for_each_subgraph(const onnx::NodeProto& n, F f) {
  for (const auto& a : n.attribute()) {
    if (a.has_g()) RECUR_RETURN_IF_ERROR(f(a.g()));
    for (const auto& g : a.graphs()) RECUR_RETURN_IF_ERROR(f(g));
  }
  return ok_status();
}
template <class F>
Status for_each_subgraph(onnx::NodeProto* n, F f) {
  for (auto& a : *n->mutable_attribute()) {
    if (a.has_g()) RECUR_RETURN_IF_ERROR(f(*a.mutable_g()));
    for (auto& g : *a.mutable_graphs()) RECUR_RETURN_IF_ERROR(f(g));
  }
  return ok_status();
}

struct Function {
  const onnx::FunctionProto* proto = nullptr;
  std::string label;                           // "function 'pkg.Block'"
  std::map<std::string, AP> defaults;          // attribute_proto, by name
  std::unordered_set<std::string> attributes;  // every attribute name it declares
  std::map<std::string, int> imports;          // its opset_import, domains normalised
};

// One expansion of one call: where the function's values go in the caller's graph.
struct Call {
  const Function* fn;
  const onnx::NodeProto* node;
  std::string prefix;  // "call/": the body's value and node names go under it
  std::unordered_map<std::string, std::string> rename;
};

class Inliner {
 public:
  Inliner(onnx::ModelProto& mp, const std::string& file, bool strict,
          std::vector<std::string>* warnings)
      : mp_(mp), file_(file), strict_(strict), warnings_(warnings) {}

  Status run() {
    RECUR_RETURN_IF_ERROR(index_functions());
    for (const auto& op : mp_.opset_import())
      model_imports_.emplace(normal_domain(op.domain()), static_cast<int>(op.version()));
    std::vector<const Function*> path;
    RECUR_RETURN_IF_ERROR(expanded_size(mp_.graph().node(), path).status());
    collect_names(mp_.graph());
    return expand_graph(mp_.mutable_graph());
  }

 private:
  Status index_functions();
  const Function* callee(const onnx::NodeProto& n) const {
    if (functions_.empty()) return nullptr;
    auto it = functions_.find(key_of(n.domain(), n.op_type(), overload_of(n, kNodeOverload)));
    return it == functions_.end() ? nullptr : &it->second;
  }
  // The nodes `nodes` and their subgraphs expand to; `path` holds the functions being sized,
  // to find cycles.
  Result<size_t> expanded_size(const RepeatedPtrField<onnx::NodeProto>& nodes,
                               std::vector<const Function*>& path);
  Result<size_t> expanded_size(const Function& fn, std::vector<const Function*>& path);
  void collect_names(const onnx::GraphProto& g);
  Status expand_graph(onnx::GraphProto* g);
  Status expand_subgraphs(onnx::NodeProto* n);
  Status place(onnx::NodeProto&& n, RepeatedPtrField<onnx::NodeProto>* out);
  Status expand_call(const onnx::NodeProto& node, const Function& fn,
                     RepeatedPtrField<onnx::NodeProto>* out);
  Status check_call(const onnx::NodeProto& node, const Function& fn);
  void bind_outputs(const onnx::NodeProto& node, Call& call,
                    RepeatedPtrField<onnx::NodeProto>* out);
  Status copy_body_node(const onnx::NodeProto& body, int index, Call& call, onnx::NodeProto* n);
  Status check_imports(const onnx::NodeProto& n, const Call& call);
  // Every value name in `g`, or in `n` and its subgraphs, as the function's names map.
  void rename_graph(onnx::GraphProto* g, Call& call);
  void rename_values(onnx::NodeProto* n, Call& call);
  Status substitute(onnx::NodeProto* n, const Call& call);
  const std::string& mapped(Call& call, const std::string& name);
  std::string fresh(const std::string& base);
  std::string describe(const onnx::NodeProto& n) const {
    return "node '" + n.name() + "' (" + (n.domain().empty() ? "" : n.domain() + "::") +
           n.op_type() + ")";
  }

  onnx::ModelProto& mp_;
  const std::string& file_;
  bool strict_;
  std::vector<std::string>* warnings_;
  std::map<std::string, Function> functions_;
  std::map<std::string, int> model_imports_;
  std::unordered_set<std::string> names_;  // every value name in the model's graphs
  std::map<const Function*, size_t> sizes_;
  size_t unnamed_calls_ = 0;
};

Status Inliner::index_functions() {
  for (const auto& fp : mp_.functions()) {
    Function fn;
    fn.proto = &fp;
    const std::string overload = overload_of(fp, kFunctionOverload);
    fn.label = "function '" + (fp.domain().empty() ? "" : fp.domain() + ".") + fp.name() +
               (overload.empty() ? "" : ":" + overload) + "'";
    if (fp.name().empty()) return invalid_model(file_ + ": a model-local function has no name");
    for (const auto& a : fp.attribute()) fn.attributes.insert(a);
    for (const std::string& bytes : field_payloads(fp, kFunctionAttributeProto)) {
      AP a;
      if (!a.ParseFromString(bytes) || a.name().empty()) {
        return invalid_model(file_ + ": " + fn.label +
                             " has an attribute default that cannot be read");
      }
      fn.attributes.insert(a.name());
      fn.defaults.emplace(a.name(), std::move(a));
    }
    for (const auto& op : fp.opset_import())
      fn.imports[normal_domain(op.domain())] = static_cast<int>(op.version());
    // An output may be an input passed through, but no name may be empty or listed twice.
    for (const auto* names : {&fp.input(), &fp.output()}) {
      std::unordered_set<std::string> seen;
      for (const auto& n : *names) {
        if (n.empty() || !seen.insert(n).second) {
          return invalid_model(file_ + ": " + fn.label + " has an input or output named '" + n +
                               "', empty or given twice");
        }
      }
    }
    // A body value that neither the inputs nor the nodes define would be read from the
    // caller's graph under a new name, and fail there with a name the user never wrote.
    std::unordered_set<std::string> defined(fp.input().begin(), fp.input().end());
    for (const auto& n : fp.node()) defined.insert(n.output().begin(), n.output().end());
    for (const auto& n : fp.node()) {
      for (const auto& in : n.input()) {
        if (!in.empty() && !defined.count(in)) {
          return invalid_model(file_ + ": " + fn.label + ": " + describe(n) + " reads '" + in +
                               "', which neither the function's inputs nor its nodes define");
        }
      }
    }
    for (const auto& o : fp.output()) {
      if (!defined.count(o)) {
        return invalid_model(file_ + ": " + fn.label + ": output '" + o + "' is never produced");
      }
    }
    const std::string key = key_of(fp.domain(), fp.name(), overload);
    if (!functions_.emplace(key, std::move(fn)).second) {
      return invalid_model(file_ + ": function '" + fp.name() + "' of domain '" + fp.domain() +
                           "' is defined twice");
    }
  }
  return ok_status();
}

void Inliner::collect_names(const onnx::GraphProto& g) {
  for (const auto& v : g.input()) names_.insert(v.name());
  for (const auto& v : g.output()) names_.insert(v.name());
  for (const auto& t : g.initializer()) names_.insert(t.name());
  for (const auto& s : g.sparse_initializer()) names_.insert(s.values().name());
  for (const auto& n : g.node()) {
    names_.insert(n.input().begin(), n.input().end());
    names_.insert(n.output().begin(), n.output().end());
    (void)for_each_subgraph(n, [&](const onnx::GraphProto& sg) {
      collect_names(sg);
      return ok_status();
    });
  }
}

std::string Inliner::fresh(const std::string& base) {
  std::string name = base;
  for (int k = 1; names_.count(name); ++k) name = base + "_" + std::to_string(k);
  names_.insert(name);
  return name;
}

const std::string& Inliner::mapped(Call& call, const std::string& name) {
  static const std::string kNone;
  if (name.empty()) return kNone;
  auto it = call.rename.find(name);
  if (it == call.rename.end()) it = call.rename.emplace(name, fresh(call.prefix + name)).first;
  return it->second;
}

Result<size_t> Inliner::expanded_size(const RepeatedPtrField<onnx::NodeProto>& nodes,
                                      std::vector<const Function*>& path) {
  size_t total = 0;
  for (const auto& n : nodes) {
    if (const Function* fn = callee(n)) {
      RECUR_ASSIGN_OR_RETURN(const size_t s, expanded_size(*fn, path));
      total += s;
    } else {
      total += 1;
      RECUR_RETURN_IF_ERROR(for_each_subgraph(n, [&](const onnx::GraphProto& sg) -> Status {
        RECUR_ASSIGN_OR_RETURN(const size_t s, expanded_size(sg.node(), path));
        total += s;
        return ok_status();
      }));
    }
    // Each term is at most the limit, so checking as it grows cannot overflow.
    if (total > kMaxInlinedNodes) {
      return invalid_model(file_ + ": expanding the model-local functions would make more than " +
                           std::to_string(kMaxInlinedNodes) + " nodes");
    }
  }
  return total;
}

Result<size_t> Inliner::expanded_size(const Function& fn, std::vector<const Function*>& path) {
  if (auto it = sizes_.find(&fn); it != sizes_.end()) return it->second;
  if (std::find(path.begin(), path.end(), &fn) != path.end()) {
    std::string chain;
    for (auto it = std::find(path.begin(), path.end(), &fn); it != path.end(); ++it)
      chain += (*it)->label + " calls ";
    return invalid_model(file_ + ": model-local functions call each other in a cycle: " + chain +
                         fn.label);
  }
  path.push_back(&fn);
  RECUR_ASSIGN_OR_RETURN(size_t s, expanded_size(fn.proto->node(), path));
  path.pop_back();
  s += static_cast<size_t>(fn.proto->output_size());  // pass-through Identity nodes, at most
  sizes_[&fn] = s;
  return s;
}

Status Inliner::expand_graph(onnx::GraphProto* g) {
  bool any = false;
  for (const auto& n : g->node()) {
    any = any || callee(n) != nullptr;
    for (const auto& a : n.attribute()) any = any || a.has_g() || a.graphs_size() > 0;
  }
  if (!any) return ok_status();
  RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Swap(g->mutable_node());
  for (auto& n : nodes) RECUR_RETURN_IF_ERROR(place(std::move(n), g->mutable_node()));
  return ok_status();
}

Status Inliner::expand_subgraphs(onnx::NodeProto* n) {
  return for_each_subgraph(n, [&](onnx::GraphProto& sg) { return expand_graph(&sg); });
}

// Appends `n` to `out`, or the expansion of `n` if it calls a function.
Status Inliner::place(onnx::NodeProto&& n, RepeatedPtrField<onnx::NodeProto>* out) {
  if (const Function* fn = callee(n)) return expand_call(n, *fn, out);
  RECUR_RETURN_IF_ERROR(expand_subgraphs(&n));
  out->Add(std::move(n));
  return ok_status();
}

Status Inliner::check_call(const onnx::NodeProto& node, const Function& fn) {
  const std::string what = file_ + ": " + describe(node) + " calls " + fn.label;
  const auto& fp = *fn.proto;
  if (node.input_size() > fp.input_size() || node.output_size() > fp.output_size()) {
    return invalid_model(what + " with " + std::to_string(node.input_size()) + " inputs and " +
                         std::to_string(node.output_size()) + " outputs; it takes up to " +
                         std::to_string(fp.input_size()) + " and " +
                         std::to_string(fp.output_size()));
  }
  for (const auto& a : node.attribute()) {
    if (fn.attributes.count(a.name())) continue;
    const std::string msg = what + " with attribute '" + a.name() + "', which it does not declare";
    if (strict_) return invalid_model(msg);
    if (warnings_) warnings_->push_back(msg + "; ignored (strict_schema is off)");
  }
  return ok_status();
}

Status Inliner::expand_call(const onnx::NodeProto& node, const Function& fn,
                            RepeatedPtrField<onnx::NodeProto>* out) {
  RECUR_RETURN_IF_ERROR(check_call(node, fn));
  const auto& fp = *fn.proto;
  Call call{&fn, &node, "", {}};
  const std::string& base =
      node.name().empty() ? fp.name() + "_" + std::to_string(unnamed_calls_++) : node.name();
  call.prefix = base + "/";
  for (int i = 0; i < fp.input_size(); ++i) {
    // An input the call leaves out is an omitted optional input inside the body too.
    call.rename[fp.input(i)] = i < node.input_size() ? node.input(i) : std::string();
  }
  bind_outputs(node, call, out);
  for (int i = 0; i < fp.node_size(); ++i) {
    onnx::NodeProto n;
    RECUR_RETURN_IF_ERROR(copy_body_node(fp.node(i), i, call, &n));
    RECUR_RETURN_IF_ERROR(place(std::move(n), out));
  }
  return ok_status();
}

// The function's outputs take the call's output names; one the call leaves out gets a new
// name. An output that is also an input is passed through with an Identity, since no body
// node writes it.
void Inliner::bind_outputs(const onnx::NodeProto& node, Call& call,
                           RepeatedPtrField<onnx::NodeProto>* out) {
  const auto& fp = *call.fn->proto;
  for (int i = 0; i < fp.output_size(); ++i) {
    const std::string& formal = fp.output(i);
    const bool given = i < node.output_size() && !node.output(i).empty();
    const std::string actual = given ? node.output(i) : fresh(call.prefix + formal);
    auto passed = call.rename.find(formal);
    if (passed == call.rename.end()) {
      call.rename[formal] = actual;
      continue;
    }
    if (!given) continue;
    onnx::NodeProto id;
    id.set_op_type("Identity");
    id.set_name(call.prefix + formal);
    id.add_input(passed->second);
    id.add_output(actual);
    out->Add(std::move(id));
  }
}

Status Inliner::copy_body_node(const onnx::NodeProto& body, int index, Call& call,
                               onnx::NodeProto* n) {
  *n = body;
  n->set_name(call.prefix +
              (body.name().empty() ? body.op_type() + "_" + std::to_string(index) : body.name()));
  rename_values(n, call);
  RECUR_RETURN_IF_ERROR(substitute(n, call));
  return check_imports(*n, call);
}

// Every name in a subgraph of the body is the function's: the subgraph's own values and the
// function values it captures alike.
void Inliner::rename_graph(onnx::GraphProto* g, Call& call) {
  for (auto& v : *g->mutable_input()) v.set_name(mapped(call, v.name()));
  for (auto& v : *g->mutable_output()) v.set_name(mapped(call, v.name()));
  for (auto& v : *g->mutable_value_info()) v.set_name(mapped(call, v.name()));
  for (auto& t : *g->mutable_initializer()) t.set_name(mapped(call, t.name()));
  for (auto& s : *g->mutable_sparse_initializer()) {
    s.mutable_values()->set_name(mapped(call, s.values().name()));
  }
  for (auto& n : *g->mutable_node()) {
    n.set_name(call.prefix + n.name());
    rename_values(&n, call);
  }
}

void Inliner::rename_values(onnx::NodeProto* n, Call& call) {
  for (auto& in : *n->mutable_input()) in = mapped(call, in);
  for (auto& o : *n->mutable_output()) o = mapped(call, o);
  (void)for_each_subgraph(n, [&](onnx::GraphProto& sg) {
    rename_graph(&sg, call);
    return ok_status();
  });
}

// Attributes that refer to the function's (ref_attr_name) take the call's value, else the
// function's default; with neither, the attribute is absent, as the ONNX IR specifies.
Status Inliner::substitute(onnx::NodeProto* n, const Call& call) {
  RECUR_RETURN_IF_ERROR(for_each_subgraph(n, [&](onnx::GraphProto& sg) -> Status {
    for (auto& sn : *sg.mutable_node()) RECUR_RETURN_IF_ERROR(substitute(&sn, call));
    return ok_status();
  }));
  RepeatedPtrField<AP> attrs;
  attrs.Swap(n->mutable_attribute());
  for (auto& a : attrs) {
    if (a.ref_attr_name().empty()) {
      n->add_attribute()->Swap(&a);
      continue;
    }
    const AP* value = nullptr;
    for (const auto& given : call.node->attribute()) {
      if (given.name() == a.ref_attr_name()) value = &given;
    }
    if (!value) {
      auto d = call.fn->defaults.find(a.ref_attr_name());
      if (d != call.fn->defaults.end()) value = &d->second;
    }
    if (!value) continue;
    if (a.type() != AP::UNDEFINED && value->type() != AP::UNDEFINED && a.type() != value->type()) {
      return invalid_model(file_ + ": " + describe(*call.node) + " gives attribute '" +
                           a.ref_attr_name() + "' as " + AP::AttributeType_Name(value->type()) +
                           ", but " + call.fn->label + " uses it as " +
                           AP::AttributeType_Name(a.type()) + " in " + describe(*n));
    }
    AP b = *value;
    b.set_name(a.name());
    n->add_attribute()->Swap(&b);
  }
  return ok_status();
}

// A body node, and each node of its subgraphs, follows the function's opset of its domain.
// Where the model imports the domain at another version, the two must select the same version
// of the operator. Calls are checked when they expand.
Status Inliner::check_imports(const onnx::NodeProto& n, const Call& call) {
  if (callee(n)) return ok_status();
  RECUR_RETURN_IF_ERROR(for_each_subgraph(n, [&](const onnx::GraphProto& sg) -> Status {
    for (const auto& sn : sg.node()) RECUR_RETURN_IF_ERROR(check_imports(sn, call));
    return ok_status();
  }));
  const std::string domain = normal_domain(n.domain());
  auto f = call.fn->imports.find(domain);
  if (f == call.fn->imports.end()) return ok_status();  // the model's import applies
  auto m = model_imports_.find(domain);
  if (m == model_imports_.end()) {
    model_imports_.emplace(domain, f->second);
    auto* op = mp_.add_opset_import();
    op->set_domain(domain);
    op->set_version(f->second);
    return ok_status();
  }
  if (m->second == f->second) return ok_status();
  const int in_fn = schema_since_version(domain, n.op_type(), f->second);
  const int in_model = schema_since_version(domain, n.op_type(), m->second);
  if (in_fn == in_model) return ok_status();
  return invalid_model(file_ + ": " + call.fn->label + " imports opset " +
                       std::to_string(f->second) + " of '" + spelled_domain(domain) +
                       "' and the model opset " + std::to_string(m->second) + ", where " +
                       n.op_type() + " differs (" + n.op_type() + "-" + std::to_string(in_fn) +
                       " against " + n.op_type() + "-" + std::to_string(in_model) +
                       "): " + describe(n) + " cannot run as the function means it");
}

}  // namespace

Status inline_local_functions(onnx::ModelProto& mp, const std::string& file, bool strict,
                              std::vector<std::string>* warnings) {
  if (mp.functions_size() == 0) return ok_status();
  return Inliner(mp, file, strict, warnings).run();
}

}  // namespace recur
