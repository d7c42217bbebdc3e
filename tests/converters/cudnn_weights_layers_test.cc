// The cuDNN weight space of a multi-layer RNN (a fused recur::StackedRNN): pseudoLayer =
// layer * directions + direction, layer 0 reading I and later layers directions * H, and every
// layer's ONNX W, R and B landing in its own blocks. No GPU needed; the GPU test checks the
// canonical order against cudnnGetRNNWeightParams.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "converters/cudnn_weights.h"

namespace recur {
namespace {

TEST(CudnnWeightsLayers, CanonicalMapOfStackedLayers) {
  CudnnRnnGeometry g;
  g.cell = RnnCell::kGru;
  g.input_size = 5;
  g.hidden_size = 3;
  g.directions = 2;
  g.num_layers = 3;
  const CudnnWeightMap m = canonical_cudnn_weight_map(g);
  ASSERT_TRUE(m.validate().ok()) << m.validate().message();
  // Layer 0: 3 input matrices 3x5 and 3 recurrent 3x3 per direction.
  const int64_t l0 = 3 * 3 * 5 + 3 * 3 * 3;
  // Later layers read 2*3 = 6 features.
  const int64_t l1 = 3 * 3 * 6 + 3 * 3 * 3;
  // Six pseudo-layers' matrices, then their 6 biases of 3 each.
  const int64_t biases = 2 * l0 + 4 * l1;
  EXPECT_EQ(m.weight_space_elems(), biases + 6 * 6 * 3);
  EXPECT_EQ(m.matrix(1, 0).offset, l0);
  EXPECT_EQ(m.matrix(2, 0), (CudnnParamBlock{2 * l0, 3, 6}));
  EXPECT_EQ(m.matrix(5, 5), (CudnnParamBlock{biases - 9, 3, 3}));
  EXPECT_EQ(m.matrix(3, 2).cols, 6);
  EXPECT_EQ(m.bias(0, 0), (CudnnParamBlock{biases, 3, 1}));
  EXPECT_EQ(m.bias(5, 5), (CudnnParamBlock{biases + 6 * 6 * 3 - 3, 3, 1}));
}

TEST(CudnnWeightsLayers, EveryLayerLandsInItsOwnBlocks) {
  for (RnnCell cell : {RnnCell::kLstm, RnnCell::kGru, RnnCell::kRnn}) {
    for (int64_t D : {1, 2}) {
      CudnnRnnGeometry g;
      g.cell = cell;
      g.input_size = 4;
      g.hidden_size = 3;
      g.directions = D;
      g.num_layers = 3;
      const int64_t G = g.gates(), H = 3;
      const CudnnWeightMap map = canonical_cudnn_weight_map(g);
      auto plan = plan_onnx_to_cudnn(map);
      ASSERT_TRUE(plan.ok()) << plan.status().message();
      // Distinct values per layer and tensor: layer*1000 + tensor*100 + index % 100.
      std::vector<std::vector<float>> w, r, b;
      for (int l = 0; l < 3; ++l) {
        const int64_t in = g.layer_input_size(l);
        w.emplace_back(static_cast<size_t>(D * G * H * in));
        r.emplace_back(static_cast<size_t>(D * G * H * H));
        b.emplace_back(static_cast<size_t>(D * 2 * G * H));
        for (size_t i = 0; i < w.back().size(); ++i)
          w.back()[i] = l * 1000 + 100 + static_cast<float>(i);
        for (size_t i = 0; i < r.back().size(); ++i)
          r.back()[i] = l * 1000 + 400 + static_cast<float>(i);
        for (size_t i = 0; i < b.back().size(); ++i)
          b.back()[i] = l * 1000 + 800 + static_cast<float>(i);
      }
      std::vector<const void*> wp, rp, bp;
      for (int l = 0; l < 3; ++l) {
        wp.push_back(w[static_cast<size_t>(l)].data());
        rp.push_back(r[static_cast<size_t>(l)].data());
        bp.push_back(b[static_cast<size_t>(l)].data());
      }
      std::vector<float> space(static_cast<size_t>(map.weight_space_elems()), -1.0f);
      ASSERT_TRUE(apply_onnx_to_cudnn_layers(*plan, sizeof(float), wp, rp, bp, space.data(),
                                             space.size() * sizeof(float))
                      .ok());
      // Each pseudo-layer's blocks hold only its own layer's values.
      for (int p = 0; p < g.pseudo_layers(); ++p) {
        const int layer = p / static_cast<int>(D);
        for (int id = 0; id < g.lin_layers(); ++id) {
          const CudnnParamBlock mb = map.matrix(p, id);
          for (int64_t k = 0; k < mb.numel(); ++k) {
            const float v = space[static_cast<size_t>(mb.offset + k)];
            EXPECT_EQ(static_cast<int>(v) / 1000, layer)
                << g.to_string() << " pseudo " << p << " id " << id;
          }
        }
      }
      // Every element written once: no -1 left.
      for (float v : space) EXPECT_NE(v, -1.0f);
      // A single-layer apply refuses a multi-layer plan.
      EXPECT_FALSE(apply_onnx_to_cudnn(*plan, sizeof(float), wp[0], rp[0], bp[0], space.data(),
                                       space.size() * sizeof(float))
                       .ok());
    }
  }
}

}  // namespace
}  // namespace recur
