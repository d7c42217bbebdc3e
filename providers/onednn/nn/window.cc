#include "providers/onednn/nn/window.h"

#include <algorithm>

namespace recur::onednn {

Result<WindowAttrs> WindowAttrs::read(const Node& node) {
  WindowAttrs w;
  AttrReader a(node);
  w.auto_pad = a.get_string("auto_pad", "NOTSET");
  w.kernel = a.get_ints("kernel_shape");
  w.strides = a.get_ints("strides");
  w.dilations = a.get_ints("dilations");
  w.pads = a.get_ints("pads");
  w.ceil_mode = a.get_int("ceil_mode", 0) != 0;
  RECUR_RETURN_IF_ERROR(a.status());
  if (w.auto_pad != "NOTSET" && w.auto_pad != "SAME_UPPER" && w.auto_pad != "SAME_LOWER" &&
      w.auto_pad != "VALID") {
    return invalid_model(node.describe() + ": unknown auto_pad '" + w.auto_pad + "'");
  }
  return w;
}

Result<Window> compute_window(const WindowAttrs& a, const std::vector<int64_t>& in,
                              const std::vector<int64_t>& kernel) {
  const size_t n = in.size();
  auto fill = [&](const std::vector<int64_t>& v, int64_t def,
                  const char* name) -> Result<std::vector<int64_t>> {
    if (v.empty()) return std::vector<int64_t>(n, def);
    if (v.size() != n) {
      return invalid_argument(std::string(name) + " has " + std::to_string(v.size()) +
                              " values for " + std::to_string(n) + " spatial dimensions");
    }
    return v;
  };
  Window w;
  w.kernel = kernel;
  RECUR_ASSIGN_OR_RETURN(w.strides, fill(a.strides, 1, "strides"));
  RECUR_ASSIGN_OR_RETURN(w.dilations, fill(a.dilations, 1, "dilations"));
  std::vector<int64_t> pads = a.pads.empty() ? std::vector<int64_t>(2 * n, 0) : a.pads;
  if (pads.size() != 2 * n)
    return invalid_argument("pads must have 2 values per spatial dimension");
  w.pad_l.resize(n);
  w.pad_r.resize(n);
  w.out.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t s = w.strides[i], d = w.dilations[i], k = kernel[i];
    if (s <= 0 || d <= 0 || k <= 0) {
      return invalid_argument("kernel, strides and dilations must be positive");
    }
    const int64_t keff = (k - 1) * d + 1;
    int64_t pl = pads[i], pr = pads[i + n], out;
    if (pl < 0 || pr < 0) return invalid_argument("negative pads are not supported");
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      out = (in[i] + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + keff - in[i]);
      pl = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pr = total - pl;
    } else {
      if (a.auto_pad == "VALID") pl = pr = 0;
      const int64_t span = in[i] + pl + pr - keff;
      if (span < 0) {
        return invalid_argument("the window (" + std::to_string(keff) +
                                ") is larger than the padded input (" +
                                std::to_string(in[i] + pl + pr) + ")");
      }
      out = (a.ceil_mode ? (span + s - 1) / s : span / s) + 1;
      // A last window that would start in the right padding is dropped.
      if (a.ceil_mode && (out - 1) * s >= in[i] + pl) --out;
    }
    w.pad_l[i] = pl;
    // oneDNN's floor formula must give `out`: ceil_mode may need more right padding than given.
    w.pad_r[i] = std::max(pr, (out - 1) * s + keff - in[i] - pl);
    w.out[i] = out;
  }
  return w;
}

}  // namespace recur::onednn
