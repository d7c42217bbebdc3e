// Transpose of float32 where the permutation, its runs of consecutive axes merged, swaps two
// groups of axes between an optional leading and an optional trailing group: [P, R, C, E] to
// [P, C, R, E]. That takes what the models around RNNs write: NCHW <-> NHWC, a spectrogram's
// [B, C, F, T] to time-major [T, B, C, F], a batch-first sequence to time-major, a
// bidirectional Y [T, 2, B, H] to [T, B, 2, H]. With E = 1 the copy is recur's 16 x 16 tile
// transpose (channels_last.h), otherwise rows of E values; both split among threads past a
// size. The reference provider's element-by-element copy took a DeepSpeech2's [64, 32, 41, 200]
// to time-major 7.8 ms. Other permutations stay with the reference provider. Any x86-64: the
// tiles are AVX-512's, AVX2's or plain loops (channels_last.h).
#include <algorithm>
#include <cstring>
#include <optional>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/common/busy_cores.h"
#include "providers/onednn/common/channels_last.h"
#include "providers/onednn/common/job_pool.h"
#include "providers/onednn/common/prim_cache.h"
#include "providers/onednn/kernels.h"

namespace recur::onednn {

namespace {

// The permutation `attr` (absent: reversed) of `rank` axes, or nothing where it is not one.
// Shape and SmallVector: nothing here allocates for up to 8 axes.
std::optional<Shape> resolve(const std::optional<Shape>& attr, int64_t rank) {
  Shape p(static_cast<size_t>(rank));
  if (!attr) {
    for (int64_t i = 0; i < rank; ++i) p[static_cast<size_t>(i)] = rank - 1 - i;
    return p;
  }
  if (static_cast<int64_t>(attr->size()) != rank) return std::nullopt;
  SmallVector<bool, 8> seen(static_cast<size_t>(rank), false);
  for (size_t i = 0; i < attr->size(); ++i) {
    const int64_t a = (*attr)[i] < 0 ? (*attr)[i] + rank : (*attr)[i];
    if (a < 0 || a >= rank || seen[static_cast<size_t>(a)]) return std::nullopt;
    seen[static_cast<size_t>(a)] = true;
    p[i] = a;
  }
  return p;
}

// The copy as [P, R, C, E] -> [P, C, R, E]; R or C is 1 where the bytes keep their order.
struct Swap {
  int64_t P = 1, R = 1, C = 1, E = 1;
};

// `perm` over `dims` (sizes; all 2 where only the permutation is known) as a Swap: the axes of
// size 1 dropped, the runs of consecutive axes merged; nothing where the merged permutation is
// another.
std::optional<Swap> as_swap(const Shape& perm, const Shape& dims) {
  // The axes longer than 1, numbered in input order.
  Shape index(dims.size(), -1);
  int64_t kept = 0;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] != 1) index[a] = kept++;
  }
  // The output's runs of consecutive input axes.
  struct Group {
    int64_t first, last, size;
  };
  SmallVector<Group, 8> groups;
  for (int64_t a : perm) {
    const int64_t d = dims[static_cast<size_t>(a)], i = index[static_cast<size_t>(a)];
    if (d == 1) continue;
    if (!groups.empty() && groups.back().last + 1 == i) {
      groups.back().last = i;
      groups.back().size *= d;
    } else {
      groups.push_back({i, i, d});
    }
  }
  // Each group's place in the input: its rank among the groups' first axes.
  SmallVector<size_t, 8> place;
  for (const Group& g : groups) {
    size_t before = 0;
    for (const Group& h : groups) before += h.first < g.first;
    place.push_back(before);
  }
  Swap s;
  const size_t n = groups.size();
  size_t i = 0;
  while (i < n && place[i] == i) s.P *= groups[i++].size;
  if (i == n) return s;  // the bytes in order
  if (i + 1 >= n || place[i] != i + 1 || place[i + 1] != i) return std::nullopt;
  s.C = groups[i].size;
  s.R = groups[i + 1].size;
  for (size_t j = i + 2; j < n; ++j) {
    if (place[j] != j) return std::nullopt;
    s.E *= groups[j].size;
  }
  return s;
}

// The swap `s` with 1 < E < kShortRow, for the tiles [t0, t1) of kRowTile values of r (tile t
// is p = t / tiles_per_p and the r block t % tiles_per_p, every c): output row (p, c, r) is
// input row (p, r, c). Masked vectors copy the rows, memcpy's call costing more than the copy;
// within a tile the output rows of one c are contiguous and the input rows of the next c share
// their cache lines. A Conformer's subsampled spectrogram, [1, 256, 99, 19] to
// [1, 99, 256, 19]: 0.70 ms by memcpy row by row in output order.
constexpr int64_t kShortRow = 128;
constexpr int64_t kRowTile = 16;

RECUR_AVX512 void copy_short_rows(const Swap& s, const float* xp, float* yp, int64_t t0,
                                  int64_t t1) {
  const __mmask16 tail =
      avx512::lanes(s.E % avx512::kLanes == 0 ? avx512::kLanes : s.E % avx512::kLanes);
  const int64_t full = (s.E - 1) / avx512::kLanes * avx512::kLanes;  // lanes before the last
  const int64_t per_p = (s.R + kRowTile - 1) / kRowTile;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t p = t / per_p, r0 = t % per_p * kRowTile, r1 = std::min(s.R, r0 + kRowTile);
    for (int64_t c = 0; c < s.C; ++c) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* from = xp + ((p * s.R + r) * s.C + c) * s.E;
        float* to = yp + ((p * s.C + c) * s.R + r) * s.E;
        for (int64_t k = 0; k < full; k += avx512::kLanes)
          _mm512_storeu_ps(to + k, _mm512_loadu_ps(from + k));
        _mm512_mask_storeu_ps(to + full, tail, _mm512_maskz_loadu_ps(tail, from + full));
      }
    }
  }
}

class TransposeKernel final : public Kernel {
 public:
  TransposeKernel(std::optional<Shape> perm, Threads threads)
      : perm_(std::move(perm)), threads_(threads) {}

  Status run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return ctx.error(ErrorCode::kInvalidArgument, "input 'data' is missing");
    if (x->dtype() != DType::kFloat32 || !x->is_cpu()) {
      return ctx.error(ErrorCode::kNotImplemented, "the oneDNN Transpose runs float32 on the host");
    }
    const std::optional<Shape> perm = resolve(perm_, x->rank());
    if (!perm) {
      return ctx.error(ErrorCode::kInvalidArgument, "perm is not a permutation of the input's " +
                                                        std::to_string(x->rank()) + " dimensions");
    }
    const Shape& dims = x->shape();
    Shape out(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) out[i] = dims[static_cast<size_t>((*perm)[i])];
    const std::optional<Swap> s = as_swap(*perm, dims);
    if (!s) {
      return ctx.error(ErrorCode::kNotImplemented,
                       "the oneDNN Transpose takes swaps of two groups of axes only");
    }
    // The bytes in order (only axes of size 1 move): a view, as the reference provider gives.
    if (s->R == 1 || s->C == 1) return ctx.set_output(0, x->reshaped(out));
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out));
    const float* xp = x->data<float>();
    float* yp = y->data<float>();
    if (s->E == 1) {
      transpose_planes(xp, yp, s->P, s->R, s->C, threads_.max, threads_.shrink);
      return ok_status();
    }
    // Rows of E values: output row (p, c, r) is input row (p, r, c).
    // Without AVX-512 a memcpy a row: no masked vectors to copy the short ones with.
    const bool tiles = s->E < kShortRow && avx512_;
    const int64_t rows = s->P * s->C * s->R;
    const int64_t units = tiles ? s->P * ((s->R + kRowTile - 1) / kRowTile) : rows;
    const Threads want = threads_for(8.0 * static_cast<double>(x->numel()), threads_);
    CoreLease lease;
    if (want.max > 1) lease.acquire(want.max, want.shrink);
    const int64_t jobs = std::min<int64_t>(std::max(1, lease.threads()), units);
    const size_t bytes = static_cast<size_t>(s->E) * sizeof(float);
    in_parts(units, jobs, [&](int64_t o0, int64_t o1) {
      if (tiles) return copy_short_rows(*s, xp, yp, o0, o1);
      for (int64_t o = o0; o < o1; ++o) {
        const int64_t r = o % s->R, c = (o / s->R) % s->C, p = o / (s->R * s->C);
        std::memcpy(yp + o * s->E, xp + ((p * s->R + r) * s->C + c) * s->E, bytes);
      }
    });
    return ok_status();
  }

 private:
  std::optional<Shape> perm_;
  Threads threads_;
  bool avx512_ = avx512::have_avx512();
};

// float32 of known rank, and a permutation that is a swap of two groups whatever the sizes not
// known at load.
Claim claim_transpose(const Node& node, const Graph& graph) {
  if (!node.has_input(0)) return Claim::decline("input 'data' is missing");
  const TypeInfo& t = graph.value(node.inputs[0]).type;
  if (t.dtype != DType::kFloat32) {
    return Claim::decline("the oneDNN Transpose runs float32 only, input is " +
                          std::string(dtype_name(t.dtype)));
  }
  if (!t.shape) return Claim::decline("the input's rank is not known at load");
  const Attribute* a = node.attr("perm");
  std::optional<Shape> attr;
  if (a) attr = Shape(a->ints);
  const auto rank = static_cast<int64_t>(t.shape->size());
  const std::optional<Shape> perm = resolve(attr, rank);
  // The axes known to be 1 dropped, any other taken as longer: at a run, an axis that turns
  // out to be 1 only merges groups.
  Shape dims;
  for (const Dim& d : *t.shape) dims.push_back(d.is_fixed() && d.value == 1 ? 1 : 2);
  if (!perm || !as_swap(*perm, dims)) {
    return Claim::decline("the oneDNN Transpose takes swaps of two groups of axes only");
  }
  return Claim::accept();
}

}  // namespace

void register_transpose(KernelRegistry& r) {
  r.add({.op_type = "Transpose",
         .since = 1,
         .create = [](CompileContext& ctx) -> Result<std::unique_ptr<Kernel>> {
           AttrReader attrs(ctx.node());
           std::optional<Shape> perm;
           if (attrs.has("perm")) perm = Shape(attrs.get_ints("perm"));
           RECUR_RETURN_IF_ERROR(attrs.status());
           return std::unique_ptr<Kernel>(
               std::make_unique<TransposeKernel>(std::move(perm), options_of(ctx).team()));
         },
         .claim = claim_transpose});
}

}  // namespace recur::onednn
