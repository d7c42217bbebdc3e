#include "tools/common/summary.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "providers/reference/common/dispatch.h"

namespace recur::tools {

namespace {

// "{'a': 0.25, 'b': 0.75}": a map's first entries, in its order.
std::string map_text(const Tensor& m) {
  std::ostringstream os;
  const Tensor& k = m.map_keys();
  const Tensor& v = m.map_values();
  const int64_t shown = std::min<int64_t>(k.numel(), 6);
  os << "{";
  for (int64_t i = 0; i < shown; ++i) {
    os << (i ? ", " : "");
    if (k.dtype() == DType::kString) {
      os << "'" << k.data<std::string>()[i] << "'";
    } else {
      os << k.data<int64_t>()[i];
    }
    os << ": ";
    if (v.dtype() == DType::kString) {
      os << '"' << v.data<std::string>()[i] << '"';
    } else {
      reference::visit_dtype(reference::kAllTypes, v.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
          os << static_cast<float>(v.data<T>()[i]);
        } else {
          os << +v.data<T>()[i];
        }
      });
    }
  }
  os << (k.numel() > shown ? ", ...}" : "}");
  return os.str();
}

std::string map_type(const Tensor& m) {
  return "map(" + std::string(dtype_name(m.map_keys().dtype())) + ", " +
         std::string(dtype_name(m.element_dtype())) + ")";
}

}  // namespace

std::string summarize(const Tensor& t) {
  std::ostringstream os;
  if (t.is_map())
    return map_type(t) + " of " + std::to_string(t.map_keys().numel()) + " entries  " + map_text(t);
  if (t.is_sequence() && t.element_dtype() == DType::kMap) {
    const auto& maps = t.elements();
    os << "sequence of " << maps.size() << (maps.empty() ? " maps" : " " + map_type(maps[0]));
    for (size_t i = 0; i < maps.size() && i < 3; ++i) os << (i ? ", " : ": ") << map_text(maps[i]);
    if (maps.size() > 3) os << ", ...";
    return os.str();
  }
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
