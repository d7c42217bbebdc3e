// RotaryEmbedding (opset 23): rotates pairs of each head's first rotary_embedding_dim channels
// by angles whose cosines and sines come from cos_cache and sin_cache. X is 4D
// [batch, num_heads, seq, head_size] or 3D [batch, seq, num_heads * head_size]. With
// position_ids [batch, seq] the caches are tables [max_position + 1, rot / 2] indexed by
// position; without, they are [batch, seq, rot / 2], one row per token.
#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

class RotaryEmbeddingKernel final : public Kernel {
 public:
  RotaryEmbeddingKernel(bool interleaved, int64_t num_heads, int64_t rotary_dim)
      : interleaved_(interleaved), num_heads_(num_heads), rotary_dim_(rotary_dim) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* cos, required_input(ctx, 1));
    RECUR_ASSIGN_OR_RETURN(const Tensor* sin, required_input(ctx, 2));
    const Tensor* pos = ctx.input(3);
    const DType dt = x->dtype();
    if (dt != DType::kFloat32 && dt != DType::kFloat16 && dt != DType::kBFloat16) {
      return invalid_argument("X must be float32, float16 or bfloat16, not " +
                              std::string(dtype_name(dt)));
    }
    if (cos->dtype() != dt || sin->dtype() != dt) {
      return invalid_argument("cos_cache (" + std::string(dtype_name(cos->dtype())) +
                              ") and sin_cache (" + std::string(dtype_name(sin->dtype())) +
                              ") must have X's dtype " + std::string(dtype_name(dt)));
    }
    const Shape& xs = x->shape();
    int64_t batch = 0, heads = 0, seq = 0, head_size = 0;
    if (xs.size() == 4) {
      batch = xs[0], heads = xs[1], seq = xs[2], head_size = xs[3];
      if (num_heads_ != 0 && num_heads_ != heads) {
        return invalid_argument("num_heads " + std::to_string(num_heads_) +
                                " differs from dimension 1 of X " + shape_to_string(xs));
      }
    } else if (xs.size() == 3) {
      if (num_heads_ <= 0) {
        return invalid_argument("num_heads must be given (positive) for a 3D X " +
                                shape_to_string(xs));
      }
      if (xs[2] % num_heads_ != 0) {
        return invalid_argument("the hidden size of X " + shape_to_string(xs) +
                                " is not a multiple of num_heads " + std::to_string(num_heads_));
      }
      batch = xs[0], heads = num_heads_, seq = xs[1], head_size = xs[2] / num_heads_;
    } else {
      return invalid_argument("X must be 3D or 4D, not " + shape_to_string(xs));
    }
    const int64_t rot = rotary_dim_ == 0 ? head_size : rotary_dim_;
    if (rot > head_size || rot % 2 != 0) {
      return invalid_argument("rotary_embedding_dim " + std::to_string(rot) +
                              " must be even and at most the head size " +
                              std::to_string(head_size));
    }
    const int64_t half = rot / 2;
    if (cos->shape() != sin->shape()) {
      return invalid_argument("cos_cache " + shape_to_string(cos->shape()) + " and sin_cache " +
                              shape_to_string(sin->shape()) + " differ in shape");
    }
    const Shape& cs = cos->shape();
    std::vector<int64_t> positions;
    if (pos) {
      if (pos->dtype() != DType::kInt64 || pos->shape() != Shape{batch, seq}) {
        return invalid_argument("position_ids must be int64 [" + std::to_string(batch) + "," +
                                std::to_string(seq) + "], not " +
                                std::string(dtype_name(pos->dtype())) + " " +
                                shape_to_string(pos->shape()));
      }
      if (cs.size() != 2 || cs[1] != half) {
        return invalid_argument("with position_ids, cos_cache and sin_cache must be [positions," +
                                std::to_string(half) + "], not " + shape_to_string(cs));
      }
      RECUR_RETURN_IF_ERROR(read_int_values_into(*pos, "position_ids", positions));
      for (int64_t p : positions) {
        if (p < 0 || p >= cs[0]) {
          return out_of_range("position id " + std::to_string(p) + " is outside the " +
                              std::to_string(cs[0]) + " rows of cos_cache");
        }
      }
    } else if (cs != Shape{batch, seq, half}) {
      return invalid_argument("without position_ids, cos_cache and sin_cache must be [" +
                              std::to_string(batch) + "," + std::to_string(seq) + "," +
                              std::to_string(half) + "], not " + shape_to_string(cs));
    }
    RECUR_ASSIGN_OR_RETURN(std::vector<double> xv, read_as_double(*x, "X"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> cv, read_as_double(*cos, "cos_cache"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> sv, read_as_double(*sin, "sin_cache"));
    std::vector<double> yv = xv;  // channels past rot stay as they are
    const bool four_d = xs.size() == 4;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t row = pos ? positions[static_cast<size_t>(b * seq + s)] : b * seq + s;
        const double* c = cv.data() + row * half;
        const double* sn = sv.data() + row * half;
        for (int64_t h = 0; h < heads; ++h) {
          const int64_t base = four_d ? ((b * heads + h) * seq + s) * head_size
                                      : ((b * seq + s) * heads + h) * head_size;
          const double* in = xv.data() + base;
          double* out = yv.data() + base;
          for (int64_t i = 0; i < half; ++i) {
            // The pair (i, i + half), or (2i, 2i + 1) when interleaved.
            const int64_t i1 = interleaved_ ? 2 * i : i;
            const int64_t i2 = interleaved_ ? 2 * i + 1 : i + half;
            out[i1] = c[i] * in[i1] - sn[i] * in[i2];
            out[i2] = sn[i] * in[i1] + c[i] * in[i2];
          }
        }
      }
    }
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, xs));
    write_from_double(yv, *y);
    return ok_status();
  }

 private:
  bool interleaved_;
  int64_t num_heads_;
  int64_t rotary_dim_;
};

}  // namespace

void register_rotary_embedding(Registrar& r) {
  r.add({.op_type = "RotaryEmbedding",
         .since = 23,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader a(ctx.node());
           const bool interleaved = a.get_int("interleaved", 0) != 0;
           const int64_t num_heads = a.get_int("num_heads", 0);
           const int64_t rotary_dim = a.get_int("rotary_embedding_dim", 0);
           RECUR_RETURN_IF_ERROR(a.status());
           if (num_heads < 0 || rotary_dim < 0) {
             return ctx.error(ErrorCode::kInvalidModel,
                              "num_heads and rotary_embedding_dim must not be negative");
           }
           return std::make_unique<RotaryEmbeddingKernel>(interleaved, num_heads, rotary_dim);
         }},
        infer_same_as_input0);
}

}  // namespace recur::reference
