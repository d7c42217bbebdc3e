// TfIdfVectorizer (opset 9): counts the n-grams of `pool` in each row of a [C] or [N, C] tensor
// of int32, int64 or strings. The pool holds the 1-grams from ngram_counts[0], the 2-grams from
// ngram_counts[1], and so on; the i-th n-gram of the pool is counted into output column
// ngram_indexes[i]. An n-gram of length n >= 2 may skip up to max_skip_count items between its
// items (the same gap throughout); each start position and gap is one occurrence. Modes: TF
// (the counts), IDF (weights[i] where the count is not 0) and TFIDF (count * weights[i]);
// weights default to 1.
#include <map>
#include <string>
#include <variant>

#include "providers/reference/common/util.h"
#include "providers/reference/tensor/tensor_util.h"
#include "providers/reference/text/text_ops.h"

namespace recur::reference {

namespace {

enum class Mode { kTF, kIDF, kTFIDF };

struct Config {
  int64_t min_gram = 1, max_gram = 1, max_skip = 0;
  Mode mode = Mode::kTF;
  int64_t width = 0;            // output columns: max(ngram_indexes) + 1
  std::vector<double> weights;  // per pool n-gram
};

// The pool's n-grams mapped to their position i in the pool (for ngram_indexes and weights).
template <class Item>
using NgramMap = std::map<std::vector<Item>, size_t>;

template <class Item>
Result<NgramMap<Item>> build_pool(const Node& node, const std::vector<Item>& pool,
                                  const std::vector<int64_t>& starts, size_t num_indexes) {
  NgramMap<Item> map;
  size_t count = 0;
  const auto pool_size = static_cast<int64_t>(pool.size());
  for (size_t level = 0; level < starts.size(); ++level) {
    const auto n = static_cast<int64_t>(level + 1);
    const int64_t begin = starts[level];
    const int64_t end = level + 1 < starts.size() ? starts[level + 1] : pool_size;
    if (begin < 0 || end < begin || end > pool_size || (end - begin) % n != 0) {
      return invalid_model(node.describe() + ": ngram_counts " + ints_to_string(starts) +
                           " do not split a pool of " + std::to_string(pool_size) +
                           " items into n-grams");
    }
    for (int64_t i = begin; i < end; i += n) {
      map.emplace(std::vector<Item>(pool.begin() + i, pool.begin() + i + n), count);
      ++count;
    }
  }
  if (count != num_indexes) {
    return invalid_model(node.describe() + ": the pool has " + std::to_string(count) +
                         " n-grams but ngram_indexes has " + std::to_string(num_indexes) +
                         " entries");
  }
  return map;
}

class TfIdfKernel final : public Kernel {
 public:
  TfIdfKernel(Config cfg, std::vector<int64_t> indexes,
              std::variant<NgramMap<int64_t>, NgramMap<std::string>> pool)
      : cfg_(std::move(cfg)), indexes_(std::move(indexes)), pool_(std::move(pool)) {}

  Status run(KernelContext& ctx) const override {
    RECUR_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    if (x->rank() != 1 && x->rank() != 2) {
      return ctx.error(ErrorCode::kInvalidArgument,
                       "X must have shape [C] or [N, C], got " + shape_to_string(x->shape()));
    }
    const int64_t rows = x->rank() == 2 ? x->dim(0) : 1;
    const int64_t cols = x->dim(-1);
    Shape out_shape = {cfg_.width};
    if (x->rank() == 2) out_shape.insert(out_shape.begin(), rows);
    RECUR_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, out_shape));
    const bool strings = x->dtype() == DType::kString;
    if (strings != std::holds_alternative<NgramMap<std::string>>(pool_)) return wrong_pool(ctx, *x);
    std::vector<int64_t> ints;
    if (!strings) {
      auto v = read_int_values(*x, "X");
      if (!v.ok()) return wrong_pool(ctx, *x);
      ints = std::move(v).value();
    }
    std::vector<int64_t> counts(indexes_.size());
    float* out = y->data<float>();
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(counts.begin(), counts.end(), 0);
      if (strings) {
        count_row(x->data<std::string>() + r * cols, cols, std::get<NgramMap<std::string>>(pool_),
                  counts);
      } else {
        count_row(ints.data() + r * cols, cols, std::get<NgramMap<int64_t>>(pool_), counts);
      }
      float* row = out + r * cfg_.width;
      std::fill(row, row + cfg_.width, 0.0f);
      for (size_t i = 0; i < counts.size(); ++i) {
        const double w = cfg_.weights.empty() ? 1.0 : cfg_.weights[i];
        double v = static_cast<double>(counts[i]);
        if (cfg_.mode == Mode::kIDF) v = counts[i] > 0 ? w : 0.0;
        if (cfg_.mode == Mode::kTFIDF) v *= w;
        row[indexes_[i]] = static_cast<float>(v);
      }
    }
    return ok_status();
  }

 private:
  static Status wrong_pool(const KernelContext& ctx, const Tensor& x) {
    return ctx.error(ErrorCode::kInvalidArgument,
                     "X is " + std::string(dtype_name(x.dtype())) +
                         ", which does not match the pool (pool_int64s takes int32 or int64, "
                         "pool_strings takes strings)");
  }

  template <class Item>
  void count_row(const Item* items, int64_t cols, const NgramMap<Item>& pool,
                 std::vector<int64_t>& counts) const {
    std::vector<Item> gram;
    for (int64_t start = 0; start < cols; ++start) {
      for (int64_t n = cfg_.min_gram; n <= cfg_.max_gram; ++n) {
        // A 1-gram has no gaps: count it once, not once per skip.
        // Gaps longer than the row fit no n-gram; the bound keeps (n - 1) * step in range.
        const int64_t max_skip = n == 1 ? 0 : std::min(cfg_.max_skip, cols);
        for (int64_t skip = 0; skip <= max_skip; ++skip) {
          const int64_t step = skip + 1;
          if (start + (n - 1) * step >= cols) break;
          gram.clear();
          for (int64_t k = 0; k < n; ++k) gram.push_back(items[start + k * step]);
          auto it = pool.find(gram);
          if (it != pool.end()) ++counts[it->second];
        }
      }
    }
  }

  Config cfg_;
  std::vector<int64_t> indexes_;
  std::variant<NgramMap<int64_t>, NgramMap<std::string>> pool_;
};

Result<std::unique_ptr<Kernel>> create_tf_idf(CompileContext& ctx) {
  const Node& node = ctx.node();
  AttrReader attrs(node);
  Config cfg;
  cfg.min_gram = attrs.require_int("min_gram_length");
  cfg.max_gram = attrs.require_int("max_gram_length");
  cfg.max_skip = attrs.require_int("max_skip_count");
  const std::string mode = attrs.get_string("mode", "");
  const std::vector<int64_t> starts = attrs.get_ints("ngram_counts");
  const std::vector<int64_t> indexes = attrs.get_ints("ngram_indexes");
  const std::vector<int64_t> pool_ints = attrs.get_ints("pool_int64s");
  const std::vector<std::string> pool_strings = attrs.get_strings("pool_strings");
  const std::vector<float> weights = attrs.get_floats("weights");
  RECUR_RETURN_IF_ERROR(attrs.status());
  if (mode == "TF") {
    cfg.mode = Mode::kTF;
  } else if (mode == "IDF") {
    cfg.mode = Mode::kIDF;
  } else if (mode == "TFIDF") {
    cfg.mode = Mode::kTFIDF;
  } else {
    return ctx.error(ErrorCode::kInvalidModel, "mode '" + mode + "' is not one of TF, IDF, TFIDF");
  }
  if (cfg.min_gram < 1 || cfg.max_gram < cfg.min_gram || cfg.max_skip < 0 ||
      cfg.max_gram > static_cast<int64_t>(starts.size())) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "min_gram_length " + std::to_string(cfg.min_gram) + ", max_gram_length " +
                         std::to_string(cfg.max_gram) + " and max_skip_count " +
                         std::to_string(cfg.max_skip) + " do not fit ngram_counts " +
                         ints_to_string(starts));
  }
  for (int64_t i : indexes) {
    if (i < 0 || i >= (int64_t{1} << 31)) {
      return ctx.error(ErrorCode::kInvalidModel,
                       "ngram_indexes value " + std::to_string(i) + " is out of range");
    }
    cfg.width = std::max(cfg.width, i + 1);
  }
  if (!weights.empty() && weights.size() != indexes.size()) {
    return ctx.error(ErrorCode::kInvalidModel, "weights must have one value per n-gram");
  }
  cfg.weights.assign(weights.begin(), weights.end());
  if (!pool_ints.empty() == !pool_strings.empty()) {
    return ctx.error(ErrorCode::kInvalidModel,
                     "exactly one of pool_int64s and pool_strings must be given");
  }
  std::variant<NgramMap<int64_t>, NgramMap<std::string>> pool;
  if (!pool_ints.empty()) {
    RECUR_ASSIGN_OR_RETURN(pool, build_pool(node, pool_ints, starts, indexes.size()));
  } else {
    RECUR_ASSIGN_OR_RETURN(pool, build_pool(node, pool_strings, starts, indexes.size()));
  }
  return std::make_unique<TfIdfKernel>(std::move(cfg), indexes, std::move(pool));
}

Status infer_tf_idf(InferContext& ctx) {
  AttrReader attrs(ctx.node());
  int64_t width = 0;
  for (int64_t i : attrs.get_ints("ngram_indexes")) width = std::max(width, i + 1);
  TypeInfo t;
  t.dtype = DType::kFloat32;
  const TypeInfo& in = ctx.input_type(0);
  if (in.rank() == 1) t.shape = std::vector<Dim>{Dim{width, ""}};
  if (in.rank() == 2) t.shape = std::vector<Dim>{(*in.shape)[0], Dim{width, ""}};
  ctx.set_output(0, t);
  return ok_status();
}

}  // namespace

void register_tf_idf_vectorizer(Registrar& r) {
  r.add({.op_type = "TfIdfVectorizer", .since = 9, .create = create_tf_idf, .takes_strings = true},
        infer_tf_idf);
}

}  // namespace recur::reference
