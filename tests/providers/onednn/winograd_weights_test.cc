// recur's transform of a 3x3 convolution's weights into oneDNN's Winograd layouts
// (providers/onednn/nn/winograd_weights.h) against oneDNN's own reorder into the same layout:
// the layouts oneDNN picks for a spread of convolutions (F(2x2, 3x3) in aaOio and aaOBiOo,
// F(4x4, 3x3) in OBaaIBOIio), channel counts on and off its blocks of 16 (padded with zeros),
// and aaOIoi, which oneDNN picks only for its int8 kernels, made from another layout's
// descriptor. Layouts it does not know are left to oneDNN.
#if RECUR_HAVE_ONEDNN

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <dnnl.hpp>

#include "providers/onednn/common/avx512.h"
#include "providers/onednn/nn/winograd_weights.h"

namespace recur::onednn {
namespace {

using dnnl::memory;

struct Conv {
  int64_t N, C, M, H, W;
};

std::string name(const Conv& c) {
  std::ostringstream s;
  s << "N" << c.N << " C" << c.C << " M" << c.M << " " << c.H << "x" << c.W;
  return s.str();
}

// The weights layout oneDNN's Winograd convolution asks for, or an empty descriptor where it
// has none for this convolution.
memory::desc winograd_layout(const Conv& c) {
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  auto any = [](memory::dims d) {
    return memory::desc(d, memory::data_type::f32, memory::format_tag::any);
  };
  try {
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                            dnnl::algorithm::convolution_winograd,
                                            any({c.N, c.C, c.H, c.W}), any({c.M, c.C, 3, 3}),
                                            any({c.N, c.M, c.H, c.W}), {1, 1}, {1, 1}, {1, 1});
    return dnnl::convolution_forward::primitive_desc(d, eng).weights_desc();
  } catch (const dnnl::error&) {
    return memory::desc();
  }
}

// oneDNN's reorder of `w` into `packed`.
std::vector<float> by_onednn(const memory::desc& plain, std::vector<float>& w,
                             const memory::desc& packed) {
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  std::vector<float> out(packed.get_size() / sizeof(float));
  memory from(plain, eng, w.data()), to(packed, eng, out.data());
  dnnl::reorder(from, to).execute(s, from, to);
  s.wait();
  return out;
}

// Ours against oneDNN's, element by element: the same products in another order, so within a
// few ulp of the largest term.
void expect_same(const Conv& c, const memory::desc& packed, const std::string& what, int jobs = 1) {
  const memory::desc plain({c.M, c.C, 3, 3}, memory::data_type::f32, memory::format_tag::oihw);
  std::mt19937 rng(static_cast<unsigned>(c.C * 131 + c.M));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> w(static_cast<size_t>(c.M * c.C * 9));
  for (float& v : w) v = dist(rng);
  const std::vector<float> want = by_onednn(plain, w, packed);
  std::vector<float> got(want.size(), std::nanf(""));
  ASSERT_TRUE(winograd_weights(plain, w.data(), packed, got.data(), jobs)) << what;
  size_t wrong = 0, first = want.size();
  for (size_t i = 0; i < want.size(); ++i) {
    if (!(std::fabs(got[i] - want[i]) <= 1e-5f)) {
      if (wrong++ == 0) first = i;
    }
  }
  EXPECT_EQ(wrong, 0u) << what << ": first at " << first << " of " << want.size() << ", "
                       << (first < want.size() ? std::to_string(got[first]) + " against " +
                                                     std::to_string(want[first])
                                               : std::string());
}

TEST(WinogradWeights, MatchOnednnsReorderInEveryLayoutItPicks) {
  if (!avx512::have_avx512()) GTEST_SKIP() << "this processor has no AVX-512";
  const Conv convs[] = {{1, 64, 64, 8, 32},   {1, 256, 256, 16, 64}, {8, 32, 32, 4, 8},
                        {1, 40, 72, 10, 10},  {1, 512, 512, 4, 40},  {8, 128, 128, 16, 32},
                        {1, 33, 35, 20, 20},  {2, 96, 160, 12, 50},  {1, 48, 200, 32, 32},
                        {4, 200, 48, 24, 24}, {1, 64, 128, 64, 64}};
  std::set<int> layouts;
  for (const Conv& c : convs) {
    const memory::desc packed = winograd_layout(c);
    if (packed.data.format_kind != dnnl_format_kind_wino) continue;
    layouts.insert(packed.data.format_desc.wino_desc.wino_format);
    expect_same(c, packed, name(c));
  }
  // The three layouts oneDNN's float32 kernels read all came up.
  EXPECT_EQ(layouts,
            (std::set<int>{dnnl_wino_wei_aaOio, dnnl_wino_wei_aaOBiOo, dnnl_wino_wei_OBaaIBOIio}));
}

// Split among jobs by blocks of output channels (the first run of a shape takes the kernel's
// threads): every element written, by one job, as the whole transform writes it. Jobs that do
// not divide the blocks, more jobs than blocks, and padded channels.
TEST(WinogradWeights, SplitAmongJobsMatchesOnednnsReorder) {
  if (!avx512::have_avx512()) GTEST_SKIP() << "this processor has no AVX-512";
  const Conv convs[] = {{1, 64, 128, 8, 64},
                        {1, 256, 256, 4, 64},
                        {1, 33, 35, 20, 20},
                        {8, 32, 64, 16, 128},
                        {2, 96, 160, 12, 50}};
  std::set<int> layouts;
  for (const Conv& c : convs) {
    const memory::desc packed = winograd_layout(c);
    if (packed.data.format_kind != dnnl_format_kind_wino) continue;
    layouts.insert(packed.data.format_desc.wino_desc.wino_format);
    for (int jobs : {2, 3, 64})
      expect_same(c, packed, name(c) + ", " + std::to_string(jobs) + " jobs", jobs);
  }
  EXPECT_GE(layouts.size(), 2u) << "both F(2x2, 3x3) and F(4x4, 3x3) layouts split";
}

TEST(WinogradWeights, MatchOnednnsReorderInAaOIoi) {
  if (!avx512::have_avx512()) GTEST_SKIP() << "this processor has no AVX-512";
  for (const Conv& c : {Conv{1, 64, 64, 8, 32}, Conv{1, 40, 72, 10, 10}}) {
    memory::desc packed = winograd_layout(c);
    ASSERT_EQ(packed.data.format_kind, dnnl_format_kind_wino) << name(c);
    ASSERT_EQ(packed.data.format_desc.wino_desc.alpha, 4) << name(c);
    packed.data.format_desc.wino_desc.wino_format = dnnl_wino_wei_aaOIoi;
    expect_same(c, packed, name(c) + " in aaOIoi");
  }
}

TEST(WinogradWeights, LeavesOtherLayoutsToOnednn) {
  if (!avx512::have_avx512()) GTEST_SKIP() << "this processor has no AVX-512";
  const Conv c{1, 64, 64, 8, 32};
  const memory::desc packed = winograd_layout(c);
  ASSERT_EQ(packed.data.format_kind, dnnl_format_kind_wino);
  const memory::desc plain({64, 64, 3, 3}, memory::data_type::f32, memory::format_tag::oihw);
  std::vector<float> w(64 * 64 * 9, 1.0f), out(packed.get_size() / sizeof(float), 0.0f);
  // Not a Winograd layout; W in hwio, or of 5x5 kernels; blocks of 8 output channels.
  const memory::desc blocked({64, 64, 3, 3}, memory::data_type::f32,
                             memory::format_tag::OIhw16i16o);
  EXPECT_FALSE(winograd_weights(plain, w.data(), blocked, out.data()));
  EXPECT_FALSE(winograd_weights(
      memory::desc({64, 64, 3, 3}, memory::data_type::f32, memory::format_tag::hwio), w.data(),
      packed, out.data()));
  EXPECT_FALSE(winograd_weights(
      memory::desc({64, 64, 5, 5}, memory::data_type::f32, memory::format_tag::oihw), w.data(),
      packed, out.data()));
  memory::desc odd = packed;
  odd.data.format_desc.wino_desc.oc_block = 8;
  EXPECT_FALSE(winograd_weights(plain, w.data(), odd, out.data()));
  for (float v : out) ASSERT_EQ(v, 0.0f) << "a declined layout was written";
}

}  // namespace
}  // namespace recur::onednn

#endif  // RECUR_HAVE_ONEDNN
