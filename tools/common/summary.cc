#include "tools/common/summary.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "providers/reference/common/dispatch.h"

namespace recur::tools {

std::string summarize(const Tensor& t) {
  std::ostringstream os;
  if (t.is_sequence()) {
    os << "sequence of " << t.elements().size() << " " << dtype_name(t.element_dtype())
       << " tensors";
    for (size_t i = 0; i < t.elements().size() && i < 4; ++i)
      os << (i ? ", " : ": ") << shape_to_string(t.elements()[i].shape());
    if (t.elements().size() > 4) os << ", ...";
    return os.str();
  }
  os << dtype_name(t.dtype()) << shape_to_string(t.shape());
  if (!t.is_cpu() || t.numel() == 0) return os.str();
  if (t.dtype() == DType::kString) {
    // The first strings, quoted (an empty one stays visible), each cut at about 40 bytes but not
    // inside a UTF-8 sequence.
    const std::string* p = t.data<std::string>();
    const int64_t shown = std::min<int64_t>(t.numel(), 6);
    os << "  [";
    for (int64_t i = 0; i < shown; ++i) {
      size_t cut = std::min<size_t>(p[i].size(), 40);
      while (cut > 0 && cut < p[i].size() && (static_cast<unsigned char>(p[i][cut]) & 0xC0) == 0x80)
        --cut;
      os << (i ? ", " : "") << '"' << p[i].substr(0, cut) << (cut < p[i].size() ? "...\"" : "\"");
    }
    os << (t.numel() > shown ? ", ...]" : "]");
    return os.str();
  }
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  std::vector<double> head;
  reference::visit_dtype(reference::kAllTypes, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      double v;
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
        v = static_cast<float>(p[i]);
      } else {
        v = static_cast<double>(p[i]);
      }
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      sum += v;
      if (head.size() < 6) head.push_back(v);
    }
  });
  os << "  min " << lo << "  max " << hi << "  mean " << sum / static_cast<double>(t.numel())
     << "  [";
  for (size_t i = 0; i < head.size(); ++i) os << (i ? ", " : "") << head[i];
  os << (t.numel() > static_cast<int64_t>(head.size()) ? ", ...]" : "]");
  return os.str();
}

}  // namespace recur::tools
