// The ONNX -> cuDNN weight-space copy plan, checked against cuDNN's documented canonical order
// and linLayerID meanings, with round trips back to ONNX. No GPU needed.
#include "converters/cudnn_weights.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

namespace recur {
namespace {

CudnnRnnGeometry geom(RnnCell cell, int64_t I, int64_t H, int64_t D, bool bias) {
  CudnnRnnGeometry g;
  g.cell = cell;
  g.input_size = I;
  g.hidden_size = H;
  g.directions = D;
  g.bias = bias;
  return g;
}

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

TEST(CudnnWeights, LinLayerIdsFollowCudnnGateMeanings) {
  // LSTM: cuDNN 0=i, 1=f, 2=c~, 3=o; ONNX order i,o,f,c.
  const int lstm_w[4] = {0, 3, 1, 2}, lstm_r[4] = {4, 7, 5, 6};
  for (int g = 0; g < 4; ++g) {
    EXPECT_EQ(cudnn_lin_layer_ids(RnnCell::kLstm, g).input, lstm_w[g]);
    EXPECT_EQ(cudnn_lin_layer_ids(RnnCell::kLstm, g).recurrent, lstm_r[g]);
  }
  // GRU: cuDNN 0=r, 1=z (update), 2=h~; ONNX order z,r,h.
  const int gru_w[3] = {1, 0, 2}, gru_r[3] = {4, 3, 5};
  for (int g = 0; g < 3; ++g) {
    EXPECT_EQ(cudnn_lin_layer_ids(RnnCell::kGru, g).input, gru_w[g]);
    EXPECT_EQ(cudnn_lin_layer_ids(RnnCell::kGru, g).recurrent, gru_r[g]);
  }
  EXPECT_EQ(cudnn_lin_layer_ids(RnnCell::kRnn, 0).input, 0);
  EXPECT_EQ(cudnn_lin_layer_ids(RnnCell::kRnn, 0).recurrent, 1);
}

TEST(CudnnWeights, CanonicalMapIsTheDocumentedOrder) {
  // Bidirectional LSTM, I=3, H=2: per pseudo-layer 4 matrices 2x3 and 4 matrices 2x2 (40
  // elements), both pseudo-layers' matrices first; then 8 biases of 2 per pseudo-layer.
  const CudnnWeightMap m = canonical_cudnn_weight_map(geom(RnnCell::kLstm, 3, 2, 2, true));
  EXPECT_EQ(m.weight_space_elems(), 112);
  EXPECT_EQ(m.matrix(0, 0), (CudnnParamBlock{0, 2, 3}));
  EXPECT_EQ(m.matrix(0, 3), (CudnnParamBlock{18, 2, 3}));
  EXPECT_EQ(m.matrix(0, 4), (CudnnParamBlock{24, 2, 2}));
  EXPECT_EQ(m.matrix(0, 7), (CudnnParamBlock{36, 2, 2}));
  EXPECT_EQ(m.matrix(1, 0), (CudnnParamBlock{40, 2, 3}));
  EXPECT_EQ(m.matrix(1, 7), (CudnnParamBlock{76, 2, 2}));
  EXPECT_EQ(m.bias(0, 0), (CudnnParamBlock{80, 2, 1}));
  EXPECT_EQ(m.bias(0, 7), (CudnnParamBlock{94, 2, 1}));
  EXPECT_EQ(m.bias(1, 0), (CudnnParamBlock{96, 2, 1}));
  EXPECT_EQ(m.bias(1, 7), (CudnnParamBlock{110, 2, 1}));
  EXPECT_TRUE(m.validate().ok());

  // One pseudo-layer: its matrices, then its biases.
  const CudnnWeightMap u = canonical_cudnn_weight_map(geom(RnnCell::kLstm, 3, 2, 1, true));
  EXPECT_EQ(u.matrix(0, 7), (CudnnParamBlock{36, 2, 2}));
  EXPECT_EQ(u.bias(0, 0), (CudnnParamBlock{40, 2, 1}));

  // GRU without bias, I=4, H=3: 3 matrices 3x4, 3 matrices 3x3, no biases.
  const CudnnWeightMap g = canonical_cudnn_weight_map(geom(RnnCell::kGru, 4, 3, 1, false));
  EXPECT_EQ(g.weight_space_elems(), 36 + 27);
  EXPECT_EQ(g.matrix(0, 2), (CudnnParamBlock{24, 3, 4}));
  EXPECT_EQ(g.matrix(0, 3), (CudnnParamBlock{36, 3, 3}));
  EXPECT_FALSE(g.bias(0, 0).present());
  EXPECT_TRUE(g.validate().ok());

  // RNN, I=1, H=5, bias: W 5x1, R 5x5, two biases.
  const CudnnWeightMap r = canonical_cudnn_weight_map(geom(RnnCell::kRnn, 1, 5, 1, true));
  EXPECT_EQ(r.weight_space_elems(), 5 + 25 + 10);
  EXPECT_EQ(r.bias(0, 1), (CudnnParamBlock{35, 5, 1}));
}

TEST(CudnnWeights, PlanSendsEachOnnxBlockToItsLinLayer) {
  const int64_t I = 3, H = 2;
  const CudnnWeightMap m = canonical_cudnn_weight_map(geom(RnnCell::kLstm, I, H, 2, true));
  auto plan = plan_onnx_to_cudnn(m);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  using S = CudnnWeightCopy::Source;
  auto find = [&](S src, int64_t onnx_offset) -> const CudnnWeightCopy* {
    for (const auto& c : plan->copies)
      if (c.tensor == src && c.onnx_offset == onnx_offset) return &c;
    return nullptr;
  };
  // Direction 1, ONNX gate o (index 1): W block at (1*4+1)*H*I -> matrix (1, 3).
  const CudnnWeightCopy* c = find(S::kW, (1 * 4 + 1) * H * I);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->cudnn_offset, m.matrix(1, 3).offset);
  EXPECT_EQ(c->count, H * I);
  // Direction 0, gate f (2): R block -> matrix (0, 5).
  c = find(S::kR, 2 * H * H);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->cudnn_offset, m.matrix(0, 5).offset);
  // Direction 1, Rb of gate c (3): B[1] offset 4H + 3H -> bias (1, 6).
  c = find(S::kB, 1 * 8 * H + (4 + 3) * H);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->cudnn_offset, m.bias(1, 6).offset);
  // The canonical space is covered exactly once.
  int64_t covered = 0;
  for (const auto& cp : plan->copies) covered += cp.count;
  EXPECT_EQ(covered, m.weight_space_elems());
}

// A valid map that is not the canonical one: blocks reversed, with gaps between them.
CudnnWeightMap scattered_map(const CudnnRnnGeometry& g) {
  std::vector<std::pair<int, int>> order;  // (pseudo, id), biases marked by id + 100
  for (int p = 0; p < g.directions; ++p)
    for (int id = 0; id < g.lin_layers(); ++id) {
      order.push_back({p, id});
      if (g.bias) order.push_back({p, id + 100});
    }
  std::reverse(order.begin(), order.end());
  std::vector<CudnnParamBlock> mats(order.size()), biases(order.size());
  int64_t off = 7;
  CudnnWeightMap tmp(g, 0);
  std::map<std::pair<int, int>, CudnnParamBlock> blocks;
  for (auto [p, id] : order) {
    const bool is_bias = id >= 100;
    const int lin = is_bias ? id - 100 : id;
    CudnnParamBlock b{off, g.hidden_size,
                      is_bias ? 1 : (lin < g.gates() ? g.input_size : g.hidden_size)};
    blocks[{p, id}] = b;
    off += b.numel() + 3;  // a gap
  }
  CudnnWeightMap m(g, off);
  for (int p = 0; p < g.directions; ++p)
    for (int id = 0; id < g.lin_layers(); ++id)
      m.set(p, id, blocks[{p, id}], g.bias ? blocks[{p, id + 100}] : CudnnParamBlock{});
  return m;
}

TEST(CudnnWeights, RoundTripsBackToOnnx) {
  for (RnnCell cell : {RnnCell::kLstm, RnnCell::kGru, RnnCell::kRnn}) {
    for (int64_t D : {1, 2}) {
      for (bool bias : {true, false}) {
        for (bool scattered : {false, true}) {
          const CudnnRnnGeometry g = geom(cell, 5, 3, D, bias);
          const CudnnWeightMap map = scattered ? scattered_map(g) : canonical_cudnn_weight_map(g);
          ASSERT_TRUE(map.validate().ok()) << g.to_string() << ": " << map.validate().message();
          auto plan = plan_onnx_to_cudnn(map);
          ASSERT_TRUE(plan.ok()) << plan.status().message();
          const auto w = random_floats(static_cast<size_t>(plan->w_elems()), 1);
          const auto r = random_floats(static_cast<size_t>(plan->r_elems()), 2);
          const auto b = random_floats(static_cast<size_t>(plan->b_elems()), 3);
          std::vector<float> space(static_cast<size_t>(map.weight_space_elems()), 42.0f);
          ASSERT_TRUE(apply_onnx_to_cudnn(*plan, 4, w.data(), r.data(), b.data(), space.data(),
                                          space.size() * 4)
                          .ok());
          std::vector<float> w2(w.size()), r2(r.size()), b2(b.size(), 9.0f);
          ASSERT_TRUE(apply_cudnn_to_onnx(*plan, 4, space.data(), space.size() * 4, w2.data(),
                                          r2.data(), b2.data())
                          .ok());
          EXPECT_EQ(w2, w) << g.to_string();
          EXPECT_EQ(r2, r) << g.to_string();
          if (bias) {
            EXPECT_EQ(b2, b) << g.to_string();
          } else {
            EXPECT_EQ(b2, std::vector<float>(b.size(), 0.0f)) << g.to_string();
          }
          // Every element no copy wrote is zero (the gaps of the scattered map).
          std::vector<char> written(space.size(), 0);
          for (const auto& c : plan->copies)
            for (int64_t i = 0; i < c.count; ++i)
              written[static_cast<size_t>(c.cudnn_offset + i)] = 1;
          for (size_t i = 0; i < space.size(); ++i) {
            if (!written[i]) {
              ASSERT_EQ(space[i], 0.0f) << g.to_string() << " element " << i;
            }
          }
        }
      }
    }
  }
}

TEST(CudnnWeights, MissingBiasLeavesZeros) {
  const CudnnRnnGeometry g = geom(RnnCell::kGru, 2, 2, 1, true);
  auto plan = plan_onnx_to_cudnn(canonical_cudnn_weight_map(g));
  ASSERT_TRUE(plan.ok());
  const auto w = random_floats(static_cast<size_t>(plan->w_elems()), 4);
  const auto r = random_floats(static_cast<size_t>(plan->r_elems()), 5);
  std::vector<uint16_t> space16(static_cast<size_t>(plan->weight_space_elems), 0xffff);
  // 2-byte elements: the plan copies bytes, whatever the type.
  std::vector<uint16_t> w16(w.size()), r16(r.size());
  for (size_t i = 0; i < w.size(); ++i) w16[i] = static_cast<uint16_t>(i + 1);
  for (size_t i = 0; i < r.size(); ++i) r16[i] = static_cast<uint16_t>(1000 + i);
  ASSERT_TRUE(apply_onnx_to_cudnn(*plan, 2, w16.data(), r16.data(), nullptr, space16.data(),
                                  space16.size() * 2)
                  .ok());
  const CudnnWeightMap m = canonical_cudnn_weight_map(g);
  for (int id = 0; id < 6; ++id) {
    const auto& bb = m.bias(0, id);
    for (int64_t i = 0; i < bb.numel(); ++i)
      EXPECT_EQ(space16[static_cast<size_t>(bb.offset + i)], 0);
  }
  // ONNX W gate z (0), first element, lands at cuDNN linLayer 1.
  EXPECT_EQ(space16[static_cast<size_t>(m.matrix(0, 1).offset)], 1);
}

TEST(CudnnWeights, ValidateRejectsBadMaps) {
  const CudnnRnnGeometry g = geom(RnnCell::kLstm, 3, 2, 1, true);
  {
    CudnnWeightMap m = canonical_cudnn_weight_map(g);
    m.set(0, 2, {0, 2, 3}, m.bias(0, 2));  // overlaps linLayer 0
    EXPECT_NE(m.validate().message().find("overlaps"), std::string::npos) << m.validate().message();
  }
  {
    CudnnWeightMap m = canonical_cudnn_weight_map(g);
    m.set(0, 5, {m.matrix(0, 5).offset, 2, 3}, m.bias(0, 5));  // recurrent must be 2x2
    EXPECT_NE(m.validate().message().find("expected 2x2"), std::string::npos);
  }
  {
    CudnnWeightMap m = canonical_cudnn_weight_map(g);
    m.set(0, 7, m.matrix(0, 7), {m.weight_space_elems() - 1, 2, 1});
    EXPECT_NE(m.validate().message().find("past the weight space"), std::string::npos);
  }
  {
    CudnnWeightMap m = canonical_cudnn_weight_map(g);
    m.set(0, 1, m.matrix(0, 1), {});
    EXPECT_NE(m.validate().message().find("missing"), std::string::npos);
  }
  {
    CudnnWeightMap m = canonical_cudnn_weight_map(geom(RnnCell::kLstm, 3, 2, 1, false));
    m.set(0, 0, m.matrix(0, 0), {100, 2, 1});
    EXPECT_NE(m.validate().message().find("NO_BIAS"), std::string::npos);
  }
  EXPECT_FALSE(plan_onnx_to_cudnn(CudnnWeightMap(g, 10)).ok());
}

// --- One step of each cell, computed twice: from ONNX W/R/B with ONNX's equations, and from
// the cuDNN weight space with cuDNN's documented equations (cudnnRNNMode_t) and linLayerID
// meanings. Equal results mean the gate mapping is right, not only self-consistent.

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

struct StepInputs {
  std::vector<float> x, h, c;
};

// ONNX: gates in W/R/B order, pre-activation of gate g for hidden unit j.
double onnx_pre(const std::vector<float>& W, const std::vector<float>& R,
                const std::vector<float>& B, int G, int g, int j, int64_t I, int64_t H,
                const StepInputs& in, bool with_r = true, bool with_rb = true) {
  double s = 0;
  for (int64_t k = 0; k < I; ++k)
    s += W[static_cast<size_t>((g * H + j) * I + k)] * in.x[static_cast<size_t>(k)];
  if (with_r) {
    for (int64_t k = 0; k < H; ++k)
      s += R[static_cast<size_t>((g * H + j) * H + k)] * in.h[static_cast<size_t>(k)];
  }
  s += B[static_cast<size_t>(g * H + j)];
  if (with_rb) s += B[static_cast<size_t>((G + g) * H + j)];
  return s;
}

// cuDNN: W_id x + b_W_id (input ids) and R_id h + b_R_id (recurrent ids), from the space.
double cudnn_in(const std::vector<float>& s, const CudnnWeightMap& m, int id, int j, int64_t I,
                const std::vector<float>& x) {
  const auto& mb = m.matrix(0, id);
  double v = m.bias(0, id).present() ? s[static_cast<size_t>(m.bias(0, id).offset + j)] : 0.0;
  for (int64_t k = 0; k < I; ++k)
    v += s[static_cast<size_t>(mb.offset + j * I + k)] * x[static_cast<size_t>(k)];
  return v;
}

TEST(CudnnWeights, CellEquationsAgreeThroughTheMapping) {
  const int64_t I = 4, H = 3;
  for (RnnCell cell : {RnnCell::kLstm, RnnCell::kGru, RnnCell::kRnn}) {
    const CudnnRnnGeometry g = geom(cell, I, H, 1, true);
    const CudnnWeightMap m = scattered_map(g);
    auto plan = plan_onnx_to_cudnn(m);
    ASSERT_TRUE(plan.ok());
    const int G = g.gates();
    const auto W = random_floats(static_cast<size_t>(plan->w_elems()), 11);
    const auto R = random_floats(static_cast<size_t>(plan->r_elems()), 12);
    const auto B = random_floats(static_cast<size_t>(plan->b_elems()), 13);
    std::vector<float> s(static_cast<size_t>(m.weight_space_elems()));
    ASSERT_TRUE(
        apply_onnx_to_cudnn(*plan, 4, W.data(), R.data(), B.data(), s.data(), s.size() * 4).ok());
    StepInputs in{random_floats(I, 14), random_floats(H, 15), random_floats(H, 16)};
    for (int j = 0; j < H; ++j) {
      double onnx_h = 0, cudnn_h = 0, onnx_c = 0, cudnn_c = 0;
      auto wx = [&](int id) { return cudnn_in(s, m, id, j, I, in.x); };
      auto rh = [&](int id) { return cudnn_in(s, m, id, j, H, in.h); };
      if (cell == RnnCell::kLstm) {
        // ONNX i,o,f,c.
        const double i = sigmoid(onnx_pre(W, R, B, G, 0, j, I, H, in));
        const double o = sigmoid(onnx_pre(W, R, B, G, 1, j, I, H, in));
        const double f = sigmoid(onnx_pre(W, R, B, G, 2, j, I, H, in));
        const double cc = std::tanh(onnx_pre(W, R, B, G, 3, j, I, H, in));
        onnx_c = f * in.c[static_cast<size_t>(j)] + i * cc;
        onnx_h = o * std::tanh(onnx_c);
        // cuDNN: i_t = σ(W_i x + R_i h + b_Wi + b_Ri) with ids 0/4, f 1/5, c' 2/6, o 3/7.
        const double ci = sigmoid(wx(0) + rh(4)), cf = sigmoid(wx(1) + rh(5));
        const double cg = std::tanh(wx(2) + rh(6)), co = sigmoid(wx(3) + rh(7));
        cudnn_c = cf * in.c[static_cast<size_t>(j)] + ci * cg;
        cudnn_h = co * std::tanh(cudnn_c);
      } else if (cell == RnnCell::kGru) {
        // ONNX z,r,h with linear_before_reset=1: h~ = tanh(Wh x + Wbh + r*(Rh h + Rbh)).
        const double z = sigmoid(onnx_pre(W, R, B, G, 0, j, I, H, in));
        const double r = sigmoid(onnx_pre(W, R, B, G, 1, j, I, H, in));
        double rpart = B[static_cast<size_t>((G + 2) * H + j)];
        for (int64_t k = 0; k < H; ++k)
          rpart += R[static_cast<size_t>((2 * H + j) * H + k)] * in.h[static_cast<size_t>(k)];
        const double hh = std::tanh(onnx_pre(W, R, B, G, 2, j, I, H, in, false, false) + r * rpart);
        onnx_h = (1 - z) * hh + z * in.h[static_cast<size_t>(j)];
        // cuDNN: r_t ids 0/3, i_t (update) 1/4, h'_t 2/5:
        // h' = tanh(W_h x + b_Wh + r*(R_h h + b_Rh)), h = (1-i)*h' + i*h_prev.
        const double cr = sigmoid(wx(0) + rh(3)), ci = sigmoid(wx(1) + rh(4));
        const double ch = std::tanh(wx(2) + cr * rh(5));
        cudnn_h = (1 - ci) * ch + ci * in.h[static_cast<size_t>(j)];
      } else {
        onnx_h = std::tanh(onnx_pre(W, R, B, G, 0, j, I, H, in));
        cudnn_h = std::tanh(wx(0) + rh(1));
      }
      EXPECT_NEAR(onnx_h, cudnn_h, 1e-12) << g.to_string() << " unit " << j;
      EXPECT_NEAR(onnx_c, cudnn_c, 1e-12) << g.to_string() << " unit " << j;
    }
  }
}

}  // namespace
}  // namespace recur
