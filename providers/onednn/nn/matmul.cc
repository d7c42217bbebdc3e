// MatMul (numpy semantics: 1-D operands promoted, batch dimensions broadcast) through oneDNN's
// matmul primitive.
#include <algorithm>
#include <cstring>
#include <tuple>

#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/nn/nn.h"

namespace recur::onednn {

namespace {

class MatMulKernel final : public Kernel {
 public:
  explicit MatMulKernel(int threads) : threads_(threads) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return ctx.error(ErrorCode::kInvalidArgument, "MatMul needs inputs A and B");
    for (const Tensor* t : {a, b}) {
      if (t->dtype() != DType::kFloat32 || !t->is_cpu()) {
        return ctx.error(ErrorCode::kNotImplemented,
                         "the oneDNN MatMul runs float32 on the host, got " +
                             std::string(dtype_name(t->dtype())));
      }
      if (t->rank() == 0) return ctx.error(ErrorCode::kInvalidArgument, "MatMul of a scalar");
    }
    Shape sa = a->shape(), sb = b->shape();
    const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
    if (a1) sa.insert(sa.begin(), 1);
    if (b1) sb.push_back(1);
    const size_t r = std::max(sa.size(), sb.size());
    sa.insert(sa.begin(), r - sa.size(), 1);
    sb.insert(sb.begin(), r - sb.size(), 1);
    const int64_t M = sa[r - 2], K = sa[r - 1], N = sb[r - 1];
    if (sb[r - 2] != K) {
      return ctx.error(ErrorCode::kInvalidArgument, "shapes " + shape_to_string(a->shape()) +
                                                        " and " + shape_to_string(b->shape()) +
                                                        " do not multiply (K " + std::to_string(K) +
                                                        " vs " + std::to_string(sb[r - 2]) + ")");
    }
    Shape so(r);
    for (size_t i = 0; i + 2 < r; ++i) {
      if (sa[i] != sb[i] && sa[i] != 1 && sb[i] != 1) {
        return ctx.error(ErrorCode::kInvalidArgument,
                         "batch dimensions of " + shape_to_string(a->shape()) + " and " +
                             shape_to_string(b->shape()) + " do not broadcast");
      }
      so[i] = sa[i] == 1 ? sb[i] : sa[i];
    }
    so[r - 2] = M;
    so[r - 1] = N;
    Shape out;
    for (size_t i = 0; i + 2 < r; ++i) out.push_back(so[i]);
    if (!a1) out.push_back(M);
    if (!b1) out.push_back(N);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    if (y->numel() == 0) return ok_status();
    if (K == 0) {
      std::memset(y->raw_data(), 0, y->nbytes());
      return ok_status();
    }
    if (r > 12) return ctx.error(ErrorCode::kNotImplemented, "rank above 12");
    const std::string what = ctx.node().describe();
    RECUR_ASSIGN_OR_RETURN(auto prim, cache_.get(std::make_tuple(sa, sb), [&]() {
      dnnl::matmul::desc d(dense_desc(sa), dense_desc(sb), dense_desc(so));
      return make_primitive<dnnl::matmul>(
          d, user_scratchpad_attr(),
          threads_for(static_cast<double>(y->numel()) * static_cast<double>(K), threads_), what);
    }));
    return execute_primitive(*prim,
                             {{DNNL_ARG_SRC, dense_desc(sa), a->raw_data()},
                              {DNNL_ARG_WEIGHTS, dense_desc(sb), b->raw_data()},
                              {DNNL_ARG_DST, dense_desc(so), y->raw_data()}},
                             scratch_, what);
  }

 private:
  int threads_;
  mutable PrimCache<std::tuple<Shape, Shape>> cache_;
  mutable ScratchPool scratch_;
};

}  // namespace

void register_matmul(KernelRegistry& r) {
  r.add({.op_type = "MatMul",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           return std::unique_ptr<Kernel>(
               std::make_unique<MatMulKernel>(options_of(ctx).max_threads));
         },
         .claim =
             [](const Node& n, const Graph& g) {
               Claim c = claim_float32_input(n, g, 0);
               return c.yes ? claim_float32_input(n, g, 1) : c;
             }});
}

}  // namespace recur::onednn
