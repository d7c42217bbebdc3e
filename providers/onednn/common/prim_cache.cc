#include "providers/onednn/common/prim_cache.h"

#include <algorithm>
#include <atomic>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "runtime/core/code_layout.h"
#include "runtime/core/cpu_isa.h"

namespace recur::onednn {

dnnl::memory::desc strided_desc(std::span<const int64_t> dims, std::span<const int64_t> strides) {
  // Through the C API with arrays on the stack: the C++ constructor takes std::vectors, which
  // kernels that describe their operands on every run would allocate.
  if (dims.size() > DNNL_MAX_NDIMS || strides.size() != dims.size()) {
    return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()),
                              dnnl::memory::data_type::f32,
                              dnnl::memory::dims(strides.begin(), strides.end()));
  }
  dnnl_dims_t d, s;
  std::copy(dims.begin(), dims.end(), d);
  std::copy(strides.begin(), strides.end(), s);
  dnnl_memory_desc_t md;
  dnnl::error::wrap_c_api(
      dnnl_memory_desc_init_by_strides(&md, static_cast<int>(dims.size()), d, dnnl_f32, s),
      "could not construct a memory descriptor");
  return dnnl::memory::desc(md);
}

dnnl::memory::desc dense_desc(const Shape& shape) {
  Shape dims = shape;
  if (dims.empty()) dims = {1};
  Shape strides(dims.size(), 1);
  for (size_t i = dims.size() - 1; i > 0; --i)
    strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return strided_desc(dims, strides);
}

dnnl::primitive_attr user_scratchpad_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

namespace {

// The operands whose layouts a smaller team must share with the primitive: kernels reorder
// constant weights at load into the layout the first pd chose.
constexpr int kLayoutArgs[] = {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1,    DNNL_ARG_SRC_2, DNNL_ARG_WEIGHTS,
                               DNNL_ARG_BIAS,  DNNL_ARG_DST_0,    DNNL_ARG_DST_1, DNNL_ARG_DST_2,
                               DNNL_ARG_MEAN,  DNNL_ARG_VARIANCE, DNNL_ARG_SCALE, DNNL_ARG_SHIFT};

bool same_md(const_dnnl_primitive_desc_t a, const_dnnl_primitive_desc_t b, int arg) {
  const dnnl_memory_desc_t* ma = dnnl_primitive_desc_query_md(a, dnnl_query_exec_arg_md, arg);
  const dnnl_memory_desc_t* mb = dnnl_primitive_desc_query_md(b, dnnl_query_exec_arg_md, arg);
  if (!ma || !mb) return ma == mb;
  return dnnl_memory_desc_equal(ma, mb) != 0;
}

// `prim` made again, from its own operation descriptor and attributes, under `threads`
// OpenMP threads; an empty primitive where oneDNN chose other layouts for that team or failed.
void remake(const dnnl::primitive& prim, SmallerTeam& out) {
  using dnnl::error;
  const_dnnl_primitive_desc_t first = nullptr;
  const_dnnl_op_desc_t op = nullptr;
  const_dnnl_primitive_attr_t attr = nullptr;
  dnnl_primitive_desc_t made = nullptr;
  try {
    error::wrap_c_api(dnnl_primitive_get_primitive_desc(prim.get(), &first), "primitive desc");
    error::wrap_c_api(dnnl_primitive_desc_query(first, dnnl_query_op_d, 0, &op), "op desc");
    error::wrap_c_api(dnnl_primitive_desc_get_attr(first, &attr), "attributes");
    ThreadScope scope(out.threads);
    error::wrap_c_api(dnnl_primitive_desc_create(&made, op, attr, cpu_engine().get(), nullptr),
                      "primitive desc for a smaller team");
    bool same = true;
    for (int arg : kLayoutArgs) same = same && same_md(first, made, arg);
    if (same) {
      const dnnl_memory_desc_t* sp =
          dnnl_primitive_desc_query_md(made, dnnl_query_scratchpad_md, 0);
      if (sp) out.scratchpad = dnnl::memory::desc(*sp);
      out.primitive = dnnl::primitive(made);
    }
  } catch (const dnnl::error&) {
    out.primitive = dnnl::primitive();  // the whole team goes on running it
  } catch (const std::bad_alloc&) {
    out.primitive = dnnl::primitive();
  }
  if (made) dnnl_primitive_desc_destroy(made);
}

}  // namespace

const SmallerTeam* SmallerTeams::get(const CachedPrimitive& p, int threads) {
  if (threads >= p.threads) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& m : made_)
    if (m->threads == threads) return m->primitive ? m.get() : nullptr;
  auto m = std::make_unique<SmallerTeam>();
  m->threads = threads;
  remake(p.primitive, *m);
  made_.push_back(std::move(m));
  return made_.back()->primitive ? made_.back().get() : nullptr;
}

Status execute_primitive(const CachedPrimitive& p, std::span<const Bind> binds, ScratchPool& pool,
                         const std::string& what) {
  CoreLease lease(p.threads, p.shrink);
  const SmallerTeam* smaller =
      lease.threads() < p.threads ? p.smaller->get(p, lease.threads()) : nullptr;
  if (smaller) count_smaller_team_run();
  const dnnl::primitive& prim = smaller ? smaller->primitive : p.primitive;
  const dnnl::memory::desc& scratch_md = smaller ? smaller->scratchpad : p.scratchpad;
  ScratchPool::Lease scratch = pool.acquire(scratch_md.get_size(), p.dense_scratch);
  ArgsPool::Lease args = smaller ? smaller->args->acquire() : p.args->acquire();
  return dnnl_try(what, [&] {
    for (const Bind& b : binds) args.bind(b.arg, b.md, b.data);
    args.bind(DNNL_ARG_SCRATCHPAD, scratch_md, scratch.data());
    ThreadScope scope(smaller ? smaller->threads : p.threads);
    args.execute(prim, thread_stream());
    thread_stream().wait();
  });
}

RECUR_LOAD_PATH Claim claim_float32_input(const Node& node, const Graph& graph, size_t i) {
  if (!node.has_input(i)) return Claim::accept();
  const DType dt = graph.value(node.inputs[i]).type.dtype;
  if (dt != DType::kFloat32 && dt != DType::kUndefined) {
    return Claim::decline("the oneDNN " + node.op_type + " kernel runs float32 only, input is " +
                          std::string(dtype_name(dt)));
  }
  return Claim::accept();
}

RECUR_LOAD_PATH Claim claim_last_axis_float32(const Node& node, const Graph& graph,
                                              int64_t default_axis) {
  if (!avx512::have_avx512()) return Claim::decline(cpu::why_not(cpu::Feature::kAvx512));
  Claim c = claim_float32_input(node, graph);
  if (!c.yes) return c;
  const TypeInfo& t = graph.value(node.inputs[0]).type;
  if (!t.shape) return Claim::decline("the input's rank is not known at load");
  const auto rank = static_cast<int64_t>(t.shape->size());
  const Attribute* a = node.attr("axis");
  const int64_t axis = a ? a->i : default_axis;
  if (rank == 0 || (axis != -1 && axis != rank - 1)) {
    return Claim::decline("the oneDNN " + node.op_type + " kernel takes the last axis only");
  }
  return Claim::accept();
}

namespace {
std::atomic<int64_t> g_shared_plan_runs{0};
}  // namespace

int64_t shared_plan_runs() { return g_shared_plan_runs.load(std::memory_order_relaxed); }
void count_shared_plan_run() { g_shared_plan_runs.fetch_add(1, std::memory_order_relaxed); }

bool generic_impl(std::string_view impl) {
  return impl.starts_with("ref") || impl.starts_with("simple");
}

}  // namespace recur::onednn
