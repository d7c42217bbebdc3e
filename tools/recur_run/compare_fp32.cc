#include "tools/recur_run/compare_fp32.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "tools/common/testdir.h"
#include "tools/recur_run/json_text.h"

namespace recur::tools {

namespace {

const char* precision_name(SessionOptions::Precision p) {
  switch (p) {
    case SessionOptions::Precision::kBf16:
      return "bf16";
    case SessionOptions::Precision::kInt8:
      return "int8";
    case SessionOptions::Precision::kFp32:
      break;
  }
  return "fp32";
}

// The largest |value| of a float output, the scale its absolute error is read against.
double max_magnitude(const Tensor& t) {
  double m = 0.0;
  if (t.is_none() || t.is_sequence() || t.dtype() != DType::kFloat32) return m;
  const Tensor host = t.is_cpu() ? t : t.to(Device::cpu());
  const float* v = host.data<float>();
  for (int64_t i = 0; i < host.numel(); ++i) m = std::max(m, std::fabs(static_cast<double>(v[i])));
  return m;
}

}  // namespace

int run_compare_fp32(const Session& session, const Feeds& feeds, double load_ms, const Args& a,
                     const std::string& model) {
  SessionOptions fp32_options = a.session;
  fp32_options.cpu_precision(SessionOptions::Precision::kFp32);
  const Session fp32(model, fp32_options);
  const Outputs got = session.run(feeds, run_options(a));
  const Outputs want = fp32.run(feeds, run_options(a));
  // No tolerance can fail here: the errors are reported, and --rtol/--atol judge them.
  const char* prec = precision_name(a.session.cpu_precision());
  Json outs = Json::array();
  bool all_within = true;
  for (size_t i = 0; i < got.size(); ++i) {
    const Comparison c = compare(got[i], want[i], a.tol);
    all_within = all_within && c.match;
    outs.push_back({{"name", got.name(i)},
                    {"max_abs_err", c.max_abs},
                    {"max_rel_err", c.max_rel},
                    {"fp32_max_abs", max_magnitude(want[i])},
                    {"within_tolerance", c.match}});
  }
  if (a.json) {
    Json j;
    j["model"] = model;
    j["precision"] = prec;
    j["load_ms"] = load_ms;
    j["rtol"] = a.tol.rtol;
    j["atol"] = a.tol.atol;
    j["outputs"] = outs;
    std::cout << json_text(j) << "\n";
  } else {
    std::printf("load: %.3f ms\n", load_ms);
    std::printf("%s against fp32 (rtol %g, atol %g):\n", prec, a.tol.rtol, a.tol.atol);
    for (const Json& o : outs) {
      std::printf("  %s: max abs err %.3g  max rel err %.3g  (fp32 max |x| %.3g)%s\n",
                  o["name"].get<std::string>().c_str(), o["max_abs_err"].get<double>(),
                  o["max_rel_err"].get<double>(), o["fp32_max_abs"].get<double>(),
                  o["within_tolerance"].get<bool>() ? "" : "  outside tolerance");
    }
  }
  return all_within ? kExitOk : kExitMismatch;
}

}  // namespace recur::tools
