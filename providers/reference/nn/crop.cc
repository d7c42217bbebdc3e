// Crop, an experimental operator of opsets before 10 that ONNX Runtime still runs in old image
// models: an NCHW tensor cut to a window. `border` is [left, top, right, bottom]; without
// `scale` the window is what those borders leave, with `scale` = [height, width] it is that
// size from (top, left).
#include <cstring>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/tensor/tensor_util.h"

namespace recur::reference {

namespace {

struct Window {
  int64_t top = 0, left = 0, height = 0, width = 0;
};

struct CropAttrs {
  std::vector<int64_t> border, scale;
};

Result<CropAttrs> read_attrs(const Node& node) {
  AttrReader a(node);
  CropAttrs c;
  c.border = a.get_ints("border");
  c.scale = a.get_ints("scale");
  RECUR_RETURN_IF_ERROR(a.status());
  if (c.border.size() != 4) {
    return invalid_model("border must hold 4 values (left, top, right, bottom), not " +
                         ints_to_string(c.border));
  }
  if (!c.scale.empty() && c.scale.size() != 2) {
    return invalid_model("scale must hold 2 values (height, width), not " +
                         ints_to_string(c.scale));
  }
  for (int64_t v : c.border) {
    if (v < 0) return invalid_model("border " + ints_to_string(c.border) + " is negative");
  }
  for (int64_t v : c.scale) {
    if (v < 0) return invalid_model("scale " + ints_to_string(c.scale) + " is negative");
  }
  return c;
}

// The window of an H x W image, or an error where it does not fit.
Result<Window> window(const CropAttrs& c, int64_t H, int64_t W) {
  const int64_t left = c.border[0], top = c.border[1], right = c.border[2], bottom = c.border[3];
  Window w{top, left, 0, 0};
  if (c.scale.empty()) {
    if (left > W || right > W - left || top > H || bottom > H - top) {
      return invalid_argument("border " + ints_to_string(c.border) + " leaves nothing of " +
                              std::to_string(H) + "x" + std::to_string(W));
    }
    w.height = H - top - bottom;
    w.width = W - left - right;
  } else {
    w.height = c.scale[0];
    w.width = c.scale[1];
    if (top > H || w.height > H - top || left > W || w.width > W - left) {
      return invalid_argument("a " + std::to_string(w.height) + "x" + std::to_string(w.width) +
                              " window at (" + std::to_string(top) + ", " + std::to_string(left) +
                              ") does not fit in " + std::to_string(H) + "x" + std::to_string(W));
    }
  }
  return w;
}

class CropKernel final : public Kernel {
 public:
  explicit CropKernel(CropAttrs c) : c_(std::move(c)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() != 4) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "input must be 4-D (NCHW), not " + shape_to_string(x->shape()));
    }
    const int64_t H = x->dim(2), W = x->dim(3);
    auto w = window(c_, H, W);
    if (!w.ok()) return w.status().with_context(ctx.node().describe());
    const Shape out{x->dim(0), x->dim(1), w->height, w->width};
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out));
    const size_t e = dtype_size(x->dtype());
    const auto* src = static_cast<const char*>(x->raw_data());
    auto* dst = static_cast<char*>(y->raw_data());
    const int64_t planes = x->dim(0) * x->dim(1);
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t r = 0; r < w->height; ++r) {
        const int64_t from = (p * H + w->top + r) * W + w->left;
        const int64_t to = (p * w->height + r) * w->width;
        std::memcpy(dst + static_cast<size_t>(to) * e, src + static_cast<size_t>(from) * e,
                    static_cast<size_t>(w->width) * e);
      }
    return ok_status();
  }

 private:
  CropAttrs c_;
};

Status infer_crop(InferContext& ctx) {
  auto c = read_attrs(ctx.node());
  if (!c.ok()) return ctx.error(c.status().message());
  const TypeInfo& in = ctx.input_type(0);
  std::vector<Dim> dims = unknown_dims(4);
  if (in.shape) {
    if (in.shape->size() != 4) {
      return ctx.error("input must be 4-D (NCHW), not of rank " + std::to_string(in.shape->size()));
    }
    dims[0] = (*in.shape)[0];
    dims[1] = (*in.shape)[1];
    const Dim &h = (*in.shape)[2], &w = (*in.shape)[3];
    if (h.is_fixed() && w.is_fixed()) {
      auto win = window(*c, h.value, w.value);
      if (!win.ok()) return ctx.error(win.status().message());
      dims[2] = Dim{win->height};
      dims[3] = Dim{win->width};
    } else if (!c->scale.empty()) {
      dims[2] = Dim{c->scale[0]};
      dims[3] = Dim{c->scale[1]};
    }
  }
  ctx.set_output(0, type_with_dims(in.dtype, std::move(dims)));
  return ok_status();
}

}  // namespace

void register_crop(Registrar& r) {
  r.add({.op_type = "Crop",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           auto c = read_attrs(ctx.node());
           if (!c.ok()) return c.status().with_context(ctx.node().describe());
           return std::make_unique<CropKernel>(std::move(c).value());
         }},
        infer_crop);
}

}  // namespace recur::reference
