#include "converters/onednn_weights.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace recur {
namespace {

std::vector<float> random_vec(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

OnednnRnnGeometry geom(RnnCell cell, int64_t D, int64_t I, int64_t H, bool lbr = false,
                       bool input_forget = false) {
  OnednnRnnGeometry g;
  g.cell = cell;
  g.directions = D;
  g.input_size = I;
  g.hidden = H;
  g.linear_before_reset = lbr;
  g.input_forget = input_forget;
  return g;
}

TEST(OnednnWeights, LstmGateOrderLdgoi) {
  const auto g = geom(RnnCell::kLstm, 2, 3, 2);
  const int64_t G = 4, H = 2, I = 3;
  std::vector<float> w(static_cast<size_t>(2 * G * H * I));
  // Encode (d, onnx gate, h, i) in each value.
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t gt = 0; gt < G; ++gt)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < I; ++i)
          w[static_cast<size_t>(((d * G + gt) * H + h) * I + i)] =
              static_cast<float>(1000 * d + 100 * gt + 10 * h + i);
  std::vector<float> out(w.size());
  ASSERT_TRUE(onnx_to_onednn_weights(g, w.data(), I, OnednnWeightsFormat::kLdgoi, out.data()).ok());
  const int onnx_of[4] = {0, 2, 3, 1};  // oneDNN i,f,c,o <- ONNX i,o,f,c
  for (int64_t d = 0; d < 2; ++d)
    for (int64_t og = 0; og < G; ++og)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t i = 0; i < I; ++i)
          EXPECT_EQ(out[static_cast<size_t>(((d * G + og) * H + h) * I + i)],
                    1000 * d + 100 * onnx_of[og] + 10 * h + i);
}

TEST(OnednnWeights, LdigoIsTransposeOfLdgoi) {
  for (RnnCell cell : {RnnCell::kLstm, RnnCell::kGru, RnnCell::kRnn}) {
    const auto g = geom(cell, 2, 5, 3);
    const int64_t G = g.gates(), H = 3, I = 5;
    const auto w = random_vec(static_cast<size_t>(g.weights_size(I)), 7);
    std::vector<float> a(w.size()), b(w.size());
    ASSERT_TRUE(onnx_to_onednn_weights(g, w.data(), I, OnednnWeightsFormat::kLdgoi, a.data()).ok());
    ASSERT_TRUE(onnx_to_onednn_weights(g, w.data(), I, OnednnWeightsFormat::kLdigo, b.data()).ok());
    for (int64_t d = 0; d < 2; ++d)
      for (int64_t og = 0; og < G; ++og)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t i = 0; i < I; ++i)
            EXPECT_EQ(a[static_cast<size_t>(((d * G + og) * H + h) * I + i)],
                      b[static_cast<size_t>(((d * I + i) * G + og) * H + h)]);
  }
}

TEST(OnednnWeights, WeightsRoundTrip) {
  for (RnnCell cell : {RnnCell::kLstm, RnnCell::kGru, RnnCell::kRnn}) {
    for (int64_t D : {1, 2}) {
      for (auto fmt : {OnednnWeightsFormat::kLdgoi, OnednnWeightsFormat::kLdigo}) {
        const auto g = geom(cell, D, 7, 5, cell == RnnCell::kGru);
        for (int64_t in : {int64_t{7}, int64_t{5}}) {
          const auto w = random_vec(static_cast<size_t>(g.weights_size(in)), 11);
          std::vector<float> mid(w.size()), back(w.size());
          ASSERT_TRUE(onnx_to_onednn_weights(g, w.data(), in, fmt, mid.data()).ok());
          ASSERT_TRUE(onednn_to_onnx_weights(g, mid.data(), in, fmt, back.data()).ok());
          EXPECT_EQ(w, back);
        }
      }
    }
  }
}

TEST(OnednnWeights, BiasCombinedPerCell) {
  const int64_t H = 3;
  // LSTM: oneDNN gate g = Wb[onnx(g)] + Rb[onnx(g)].
  {
    const auto g = geom(RnnCell::kLstm, 1, 2, H);
    const auto b = random_vec(8 * H, 3);
    std::vector<float> out(static_cast<size_t>(g.bias_size()));
    ASSERT_TRUE(onnx_to_onednn_bias(g, b.data(), out.data()).ok());
    const int onnx_of[4] = {0, 2, 3, 1};
    for (int og = 0; og < 4; ++og)
      for (int64_t h = 0; h < H; ++h)
        EXPECT_FLOAT_EQ(out[static_cast<size_t>(og * H + h)],
                        b[static_cast<size_t>(onnx_of[og] * H + h)] +
                            b[static_cast<size_t>(4 * H + onnx_of[og] * H + h)]);
  }
  // GRU linear_before_reset=0: three sums, z,r,h one to one.
  {
    const auto g = geom(RnnCell::kGru, 2, 2, H);
    const auto b = random_vec(2 * 6 * H, 4);
    std::vector<float> out(static_cast<size_t>(g.bias_size()));
    ASSERT_EQ(g.bias_size(), 2 * 3 * H);
    ASSERT_TRUE(onnx_to_onednn_bias(g, b.data(), out.data()).ok());
    for (int d = 0; d < 2; ++d)
      for (int gt = 0; gt < 3; ++gt)
        for (int64_t h = 0; h < H; ++h)
          EXPECT_FLOAT_EQ(out[static_cast<size_t>((d * 3 + gt) * H + h)],
                          b[static_cast<size_t>(d * 6 * H + gt * H + h)] +
                              b[static_cast<size_t>(d * 6 * H + 3 * H + gt * H + h)]);
  }
  // LBR-GRU: [Wbz+Rbz, Wbr+Rbr, Wbh, Rbh].
  {
    const auto g = geom(RnnCell::kGru, 1, 2, H, /*lbr=*/true);
    const auto b = random_vec(6 * H, 5);
    std::vector<float> out(static_cast<size_t>(g.bias_size()));
    ASSERT_EQ(g.bias_size(), 4 * H);
    ASSERT_TRUE(onnx_to_onednn_bias(g, b.data(), out.data()).ok());
    for (int64_t h = 0; h < H; ++h) {
      const size_t u = static_cast<size_t>(h);
      const size_t sH = static_cast<size_t>(H);
      EXPECT_FLOAT_EQ(out[u], b[u] + b[3 * sH + u]);
      EXPECT_FLOAT_EQ(out[sH + u], b[sH + u] + b[4 * sH + u]);
      EXPECT_FLOAT_EQ(out[2 * sH + u], b[2 * sH + u]);
      EXPECT_FLOAT_EQ(out[3 * sH + u], b[5 * sH + u]);
    }
  }
  // RNN: one gate.
  {
    const auto g = geom(RnnCell::kRnn, 1, 2, H);
    const auto b = random_vec(2 * H, 6);
    std::vector<float> out(static_cast<size_t>(g.bias_size()));
    ASSERT_TRUE(onnx_to_onednn_bias(g, b.data(), out.data()).ok());
    for (int64_t h = 0; h < H; ++h)
      EXPECT_FLOAT_EQ(out[static_cast<size_t>(h)],
                      b[static_cast<size_t>(h)] + b[static_cast<size_t>(H + h)]);
  }
}

TEST(OnednnWeights, AbsentBiasAndPeepholeAreZero) {
  const auto g = geom(RnnCell::kLstm, 2, 3, 4);
  std::vector<float> b(static_cast<size_t>(g.bias_size()), 9.0f);
  std::vector<float> p(static_cast<size_t>(g.peephole_size()), 9.0f);
  ASSERT_TRUE(onnx_to_onednn_bias(g, nullptr, b.data()).ok());
  ASSERT_TRUE(onnx_to_onednn_peephole(g, nullptr, p.data()).ok());
  for (float v : b) EXPECT_EQ(v, 0.0f);
  for (float v : p) EXPECT_EQ(v, 0.0f);
}

TEST(OnednnWeights, BiasAndPeepholeRoundTrip) {
  struct Case {
    RnnCell cell;
    bool lbr;
  };
  for (Case c : {Case{RnnCell::kLstm, false}, Case{RnnCell::kGru, false}, Case{RnnCell::kGru, true},
                 Case{RnnCell::kRnn, false}}) {
    for (int64_t D : {1, 2}) {
      const auto g = geom(c.cell, D, 3, 4, c.lbr);
      const auto b = random_vec(static_cast<size_t>(D * 2 * g.gates() * 4), 8);
      std::vector<float> first(static_cast<size_t>(g.bias_size())), onnx(b.size()),
          second(first.size());
      ASSERT_TRUE(onnx_to_onednn_bias(g, b.data(), first.data()).ok());
      ASSERT_TRUE(onednn_to_onnx_bias(g, first.data(), onnx.data()).ok());
      ASSERT_TRUE(onnx_to_onednn_bias(g, onnx.data(), second.data()).ok());
      EXPECT_EQ(first, second);
    }
  }
  const auto g = geom(RnnCell::kLstm, 2, 3, 4);
  const auto p = random_vec(static_cast<size_t>(g.peephole_size()), 9);
  std::vector<float> mid(p.size()), back(p.size());
  ASSERT_TRUE(onnx_to_onednn_peephole(g, p.data(), mid.data()).ok());
  // oneDNN i,f,o <- ONNX i,o,f.
  for (int64_t h = 0; h < 4; ++h) {
    EXPECT_EQ(mid[static_cast<size_t>(h)], p[static_cast<size_t>(h)]);
    EXPECT_EQ(mid[static_cast<size_t>(4 + h)], p[static_cast<size_t>(8 + h)]);
    EXPECT_EQ(mid[static_cast<size_t>(8 + h)], p[static_cast<size_t>(4 + h)]);
  }
  ASSERT_TRUE(onednn_to_onnx_peephole(g, mid.data(), back.data()).ok());
  EXPECT_EQ(p, back);
}

TEST(OnednnWeights, RejectsBadGeometry) {
  auto g = geom(RnnCell::kGru, 1, 3, 4, false, /*input_forget=*/true);
  std::vector<float> w(100), out(100);
  EXPECT_FALSE(
      onnx_to_onednn_weights(g, w.data(), 3, OnednnWeightsFormat::kLdgoi, out.data()).ok());
  g = geom(RnnCell::kLstm, 3, 3, 4);
  EXPECT_FALSE(onnx_to_onednn_bias(g, w.data(), out.data()).ok());
  g = geom(RnnCell::kRnn, 1, 3, 4);
  EXPECT_FALSE(onnx_to_onednn_peephole(g, w.data(), out.data()).ok());
}

// --- One cell step computed both ways: ONNX's equations on the ONNX weights, and oneDNN's
// documented equations on the converted ones. This checks the meaning of the conversion, not
// just its index arithmetic.

double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// x [I], h [H] -> pre-activation of ONNX gate block `gate` for row h (W x + R h, no bias).
double onnx_dot(const std::vector<float>& w, const std::vector<float>& r,
                const std::vector<float>& x, const std::vector<float>& hprev, int64_t gate,
                int64_t h, int64_t I, int64_t H) {
  double s = 0;
  for (int64_t i = 0; i < I; ++i)
    s += w[static_cast<size_t>((gate * H + h) * I + i)] * x[static_cast<size_t>(i)];
  for (int64_t k = 0; k < H; ++k)
    s += r[static_cast<size_t>((gate * H + h) * H + k)] * hprev[static_cast<size_t>(k)];
  return s;
}

// oneDNN ldigo weights: gate og, row h.
double onednn_dot(const std::vector<float>& wl, int64_t in, int64_t G, int64_t H,
                  const std::vector<float>& v, int64_t og, int64_t h) {
  double s = 0;
  for (int64_t i = 0; i < in; ++i)
    s += wl[static_cast<size_t>((i * G + og) * H + h)] * v[static_cast<size_t>(i)];
  return s;
}

TEST(OnednnWeights, LstmStepMatchesWithPeepholesAndInputForget) {
  const int64_t I = 5, H = 4, G = 4;
  for (bool input_forget : {false, true}) {
    const auto g = geom(RnnCell::kLstm, 1, I, H, false, input_forget);
    const auto w = random_vec(static_cast<size_t>(G * H * I), 21);
    const auto r = random_vec(static_cast<size_t>(G * H * H), 22);
    const auto b = random_vec(static_cast<size_t>(2 * G * H), 23);
    const auto p = random_vec(static_cast<size_t>(3 * H), 24);
    const auto x = random_vec(static_cast<size_t>(I), 25);
    const auto h0 = random_vec(static_cast<size_t>(H), 26);
    const auto c0 = random_vec(static_cast<size_t>(H), 27);
    std::vector<float> wl(w.size()), wi(r.size()), bb(static_cast<size_t>(G * H)),
        pp(static_cast<size_t>(3 * H));
    ASSERT_TRUE(
        onnx_to_onednn_weights(g, w.data(), I, OnednnWeightsFormat::kLdigo, wl.data()).ok());
    ASSERT_TRUE(
        onnx_to_onednn_weights(g, r.data(), H, OnednnWeightsFormat::kLdigo, wi.data()).ok());
    ASSERT_TRUE(onnx_to_onednn_bias(g, b.data(), bb.data()).ok());
    ASSERT_TRUE(onnx_to_onednn_peephole(g, p.data(), pp.data()).ok());
    for (int64_t h = 0; h < H; ++h) {
      const size_t uh = static_cast<size_t>(h);
      auto pre = [&](int gate) {
        return onnx_dot(w, r, x, h0, gate, h, I, H) + b[static_cast<size_t>(gate * H + h)] +
               b[static_cast<size_t>(G * H + gate * H + h)];
      };
      // ONNX: i,o,f,c blocks; P i,o,f; f = 1 - i under input_forget.
      const double i_t = sigm(pre(0) + p[uh] * c0[uh]);
      const double f_t = input_forget ? 1.0 - i_t : sigm(pre(2) + p[2 * H + uh] * c0[uh]);
      const double c_t = f_t * c0[uh] + i_t * std::tanh(pre(3));
      const double o_t = sigm(pre(1) + p[H + uh] * c_t);
      const double want_h = o_t * std::tanh(c_t);
      // oneDNN: gates i,f,c,o; bias combined; peephole i,f,o with o reading the new c.
      auto opre = [&](int og) {
        return onednn_dot(wl, I, G, H, x, og, h) + onednn_dot(wi, H, G, H, h0, og, h) +
               bb[static_cast<size_t>(og * H + h)];
      };
      const double di = sigm(opre(0) + pp[uh] * c0[uh]);
      const double df = sigm(opre(1) + pp[H + uh] * c0[uh]);
      const double dc = df * c0[uh] + di * std::tanh(opre(2));
      const double dout = sigm(opre(3) + pp[2 * H + uh] * dc);
      EXPECT_NEAR(dout * std::tanh(dc), want_h, 1e-5) << "h=" << h << " if=" << input_forget;
      EXPECT_NEAR(dc, c_t, 1e-5);
    }
  }
}

TEST(OnednnWeights, GruStepMatchesBothResetModes) {
  const int64_t I = 3, H = 5, G = 3;
  for (bool lbr : {false, true}) {
    const auto g = geom(RnnCell::kGru, 1, I, H, lbr);
    const auto w = random_vec(static_cast<size_t>(G * H * I), 31);
    const auto r = random_vec(static_cast<size_t>(G * H * H), 32);
    const auto b = random_vec(static_cast<size_t>(2 * G * H), 33);
    const auto x = random_vec(static_cast<size_t>(I), 34);
    const auto h0 = random_vec(static_cast<size_t>(H), 35);
    std::vector<float> wl(w.size()), wi(r.size()), bb(static_cast<size_t>(g.bias_size()));
    ASSERT_TRUE(
        onnx_to_onednn_weights(g, w.data(), I, OnednnWeightsFormat::kLdigo, wl.data()).ok());
    ASSERT_TRUE(
        onnx_to_onednn_weights(g, r.data(), H, OnednnWeightsFormat::kLdigo, wi.data()).ok());
    ASSERT_TRUE(onnx_to_onednn_bias(g, b.data(), bb.data()).ok());
    // ONNX reference.
    std::vector<double> z(static_cast<size_t>(H)), rr(static_cast<size_t>(H));
    std::vector<float> rh(static_cast<size_t>(H));
    auto wb = [&](int gate, int64_t h) { return b[static_cast<size_t>(gate * H + h)]; };
    auto rb = [&](int gate, int64_t h) { return b[static_cast<size_t>(G * H + gate * H + h)]; };
    auto wx = [&](int gate, int64_t h) {
      double s = 0;
      for (int64_t i = 0; i < I; ++i)
        s += w[static_cast<size_t>((gate * H + h) * I + i)] * x[static_cast<size_t>(i)];
      return s;
    };
    auto rv = [&](int gate, int64_t h, const std::vector<float>& v) {
      double s = 0;
      for (int64_t k = 0; k < H; ++k)
        s += r[static_cast<size_t>((gate * H + h) * H + k)] * v[static_cast<size_t>(k)];
      return s;
    };
    for (int64_t h = 0; h < H; ++h) {
      z[static_cast<size_t>(h)] = sigm(wx(0, h) + rv(0, h, h0) + wb(0, h) + rb(0, h));
      rr[static_cast<size_t>(h)] = sigm(wx(1, h) + rv(1, h, h0) + wb(1, h) + rb(1, h));
      rh[static_cast<size_t>(h)] =
          static_cast<float>(rr[static_cast<size_t>(h)] * h0[static_cast<size_t>(h)]);
    }
    for (int64_t h = 0; h < H; ++h) {
      const size_t uh = static_cast<size_t>(h);
      const double ht = lbr ? std::tanh(wx(2, h) + wb(2, h) + rr[uh] * (rv(2, h, h0) + rb(2, h)))
                            : std::tanh(wx(2, h) + rv(2, h, rh) + rb(2, h) + wb(2, h));
      const double want = (1 - z[uh]) * ht + z[uh] * h0[uh];
      // oneDNN: u,r,o gates.
      const double u =
          sigm(onednn_dot(wl, I, G, H, x, 0, h) + onednn_dot(wi, H, G, H, h0, 0, h) + bb[uh]);
      const double rg = sigm(onednn_dot(wl, I, G, H, x, 1, h) + onednn_dot(wi, H, G, H, h0, 1, h) +
                             bb[static_cast<size_t>(H) + uh]);
      double o;
      if (lbr) {
        o = std::tanh(
            onednn_dot(wl, I, G, H, x, 2, h) + bb[2 * static_cast<size_t>(H) + uh] +
            rg * (onednn_dot(wi, H, G, H, h0, 2, h) + bb[3 * static_cast<size_t>(H) + uh]));
      } else {
        std::vector<float> rh2(static_cast<size_t>(H));
        for (int64_t k = 0; k < H; ++k) {
          const size_t uk = static_cast<size_t>(k);
          rh2[uk] = static_cast<float>(sigm(onednn_dot(wl, I, G, H, x, 1, k) +
                                            onednn_dot(wi, H, G, H, h0, 1, k) +
                                            bb[static_cast<size_t>(H) + uk]) *
                                       h0[uk]);
        }
        o = std::tanh(onednn_dot(wl, I, G, H, x, 2, h) + onednn_dot(wi, H, G, H, rh2, 2, h) +
                      bb[2 * static_cast<size_t>(H) + uh]);
      }
      EXPECT_NEAR(u * h0[uh] + (1 - u) * o, want, 1e-5) << "lbr=" << lbr << " h=" << h;
    }
  }
}

// With discard_source the source's pages go back to the kernel as they are read; the weights
// must come out the same, also where a block is read twice (input_forget's f is the negated
// i). Blocks of 128 KiB, so that the source is discarded in several steps.
TEST(OnednnWeights, DiscardingTheSourceGivesTheSameWeights) {
  struct Case {
    RnnCell cell;
    bool input_forget;
  };
  for (const Case c : {Case{RnnCell::kLstm, false}, Case{RnnCell::kLstm, true},
                       Case{RnnCell::kGru, false}, Case{RnnCell::kRnn, false}}) {
    for (int64_t D : {1, 2}) {
      for (auto fmt : {OnednnWeightsFormat::kLdgoi, OnednnWeightsFormat::kLdigo}) {
        SCOPED_TRACE(::testing::Message()
                     << "cell " << static_cast<int>(c.cell) << " D " << D << " input_forget "
                     << c.input_forget << " format " << static_cast<int>(fmt));
        const int64_t I = 512, H = 64;
        const auto g = geom(c.cell, D, I, H, false, c.input_forget);
        const auto w = random_vec(static_cast<size_t>(g.weights_size(I)), 21);
        std::vector<float> expected(w.size()), got(w.size());
        ASSERT_TRUE(onnx_to_onednn_weights(g, w.data(), I, fmt, expected.data()).ok());
        std::vector<float> source = w;
        ASSERT_TRUE(onnx_to_onednn_weights(g, source.data(), I, fmt, got.data(), true).ok());
        EXPECT_EQ(got, expected);
        // The source was given back, at least in part: its discarded pages read as zeros.
        EXPECT_GT(std::count(source.begin(), source.end(), 0.0f), 0);
      }
    }
  }
}

// A packer that writes ldigo straight from its own copy (the row team, row_team.h) scatters the
// ONNX rows by onnx_rows_in_ldigo and fills the derived blocks: the same values as the converter,
// for every cell, both GRU modes and input_forget.
TEST(OnednnWeights, ScatteredRowsAndDerivedBlocksMatchTheConverter) {
  for (RnnCell cell : {RnnCell::kLstm, RnnCell::kGru, RnnCell::kRnn}) {
    for (bool variant : {false, true}) {
      const bool lstm = cell == RnnCell::kLstm;
      const auto g = geom(cell, 1, 6, 5, !lstm && variant, lstm && variant);
      const int64_t G = g.gates(), H = g.hidden;
      for (int64_t in : {int64_t{6}, int64_t{5}}) {
        const auto w = random_vec(static_cast<size_t>(g.weights_size(in)), 13);
        std::vector<float> want(w.size()), got(w.size(), 99.0f);
        ASSERT_TRUE(
            onnx_to_onednn_weights(g, w.data(), in, OnednnWeightsFormat::kLdigo, want.data()).ok());
        const std::vector<int64_t> rows = onnx_rows_in_ldigo(g);
        ASSERT_EQ(rows.size(), static_cast<size_t>(G * H));
        for (int64_t s = 0; s < G * H; ++s) {
          const int64_t at = rows[static_cast<size_t>(s)];
          if (at < 0) continue;
          for (int64_t k = 0; k < in; ++k)
            got[static_cast<size_t>(at + k * G * H)] = w[static_cast<size_t>(s * in + k)];
        }
        derive_ldigo_blocks(g, in, got.data());
        EXPECT_EQ(got, want) << "cell " << static_cast<int>(cell) << " variant " << variant
                             << " in " << in;
      }
    }
  }
}

}  // namespace
}  // namespace recur
