// NonMaxSuppression (opsets 10, 11): greedy selection per batch and class of the boxes whose
// IoU with every box already selected is at most iou_threshold, in descending score order.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "providers/reference/common/util.h"
#include "providers/reference/nn/nn_ops.h"
#include "providers/reference/nn/nn_util.h"

namespace recur::reference {

namespace {

struct Box {
  double y1, x1, y2, x2;
};

double iou(const Box& a, const Box& b) {
  const double area_a = (a.y2 - a.y1) * (a.x2 - a.x1);
  const double area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  if (area_a <= 0 || area_b <= 0) return 0;
  const double ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const double iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return 0;
  const double inter = ih * iw;
  return inter / (area_a + area_b - inter);
}

class NonMaxSuppressionKernel final : public Kernel {
 public:
  explicit NonMaxSuppressionKernel(bool center) : center_(center) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* boxes_t, required_input(ctx, 0));
    RECUR_ASSIGN_OR_RETURN(const Tensor* scores_t, required_input(ctx, 1));
    if (boxes_t->rank() != 3 || boxes_t->dim(2) != 4 || scores_t->rank() != 3 ||
        scores_t->dim(0) != boxes_t->dim(0) || scores_t->dim(2) != boxes_t->dim(1)) {
      return invalid_argument("expected boxes [B, N, 4] and scores [B, C, N], got " +
                              shape_to_string(boxes_t->shape()) + " and " +
                              shape_to_string(scores_t->shape()));
    }
    int64_t max_out = 0;
    double iou_threshold = 0, score_threshold = 0;
    bool has_score_threshold = false;
    if (const Tensor* t = ctx.input(2); t && t->numel() > 0) {
      RECUR_ASSIGN_OR_RETURN(std::vector<int64_t> v,
                             read_int_values(*t, "max_output_boxes_per_class"));
      max_out = v[0];
    }
    if (const Tensor* t = ctx.input(3); t && t->numel() > 0) {
      RECUR_ASSIGN_OR_RETURN(std::vector<double> v, read_as_double(*t, "iou_threshold"));
      iou_threshold = v[0];
    }
    if (const Tensor* t = ctx.input(4); t && t->numel() > 0) {
      RECUR_ASSIGN_OR_RETURN(std::vector<double> v, read_as_double(*t, "score_threshold"));
      score_threshold = v[0];
      has_score_threshold = true;
    }
    RECUR_ASSIGN_OR_RETURN(std::vector<double> bs, read_as_double(*boxes_t, "boxes"));
    RECUR_ASSIGN_OR_RETURN(std::vector<double> ss, read_as_double(*scores_t, "scores"));
    const int64_t B = boxes_t->dim(0), N = boxes_t->dim(1), C = scores_t->dim(1);
    std::vector<Box> boxes(static_cast<size_t>(B * N));
    for (size_t i = 0; i < boxes.size(); ++i) {
      const double* p = bs.data() + i * 4;
      if (center_) {
        boxes[i] = {p[1] - p[3] / 2, p[0] - p[2] / 2, p[1] + p[3] / 2, p[0] + p[2] / 2};
      } else {
        boxes[i] = {std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]),
                    std::max(p[1], p[3])};
      }
    }
    std::vector<int64_t> selected;  // (batch, class, box) triples
    std::vector<int64_t> order;
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t c = 0; c < C; ++c) {
        if (max_out <= 0) continue;
        const double* sc = ss.data() + (b * C + c) * N;
        order.clear();
        for (int64_t i = 0; i < N; ++i) {
          // NaN scores are never selected (and would break the sort's ordering).
          if (std::isnan(sc[i])) continue;
          if (!has_score_threshold || sc[i] > score_threshold) order.push_back(i);
        }
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t l, int64_t r) { return sc[l] > sc[r]; });
        std::vector<int64_t> kept;
        for (int64_t i : order) {
          if (static_cast<int64_t>(kept.size()) >= max_out) break;
          const Box& bi = boxes[static_cast<size_t>(b * N + i)];
          bool keep = true;
          for (int64_t k : kept) {
            if (iou(bi, boxes[static_cast<size_t>(b * N + k)]) > iou_threshold) {
              keep = false;
              break;
            }
          }
          if (!keep) continue;
          kept.push_back(i);
          selected.insert(selected.end(), {b, c, i});
        }
      }
    }
    const auto count = static_cast<int64_t>(selected.size() / 3);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, {count, 3}));
    std::copy(selected.begin(), selected.end(), y->data<int64_t>());
    return ok_status();
  }

 private:
  bool center_;
};

}  // namespace

void register_non_max_suppression(Registrar& r) {
  r.add({.op_type = "NonMaxSuppression",
         .since = 10,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader r(ctx.node());
           const int64_t center = r.get_int("center_point_box", 0);
           RECUR_RETURN_IF_ERROR(r.status());
           if (center != 0 && center != 1) {
             return ctx.error(ErrorCode::kInvalidModel, "center_point_box must be 0 or 1");
           }
           return std::make_unique<NonMaxSuppressionKernel>(center == 1);
         }},
        [](InferContext& ctx) {
          TypeInfo t;
          t.dtype = DType::kInt64;
          t.shape = std::vector<Dim>{Dim{}, Dim{3, {}}};
          ctx.set_output(0, t);
          return ok_status();
        });
}

}  // namespace recur::reference
