// Unread RNN states dropped at load (runtime/engine/optimize/drop_unread_outputs.cc): an
// exporter names Y_h and Y_c of every LSTM even where only Y is read; the pass leaves them
// unnamed so that kernels skip them, and keeps every output that something reads.
#include <gtest/gtest.h>

#include "runtime/engine/onnx/model_loader.h"
#include "runtime/engine/optimize/optimizer.h"
#include "tests/support/data_dirs.h"

namespace recur::testing {
namespace {

const std::string kModels = models_dir();

std::vector<std::vector<bool>> rnn_outputs(const Graph& g) {
  std::vector<std::vector<bool>> out;
  for (const Node& n : g.nodes()) {
    if (n.op_type != "LSTM" && n.op_type != "GRU" && n.op_type != "RNN") continue;
    out.emplace_back();
    for (size_t o = 0; o < 3; ++o) out.back().push_back(n.has_output(o));
  }
  return out;
}

TEST(DropUnreadRnnStates, OnlyWhatNothingReadsGoes) {
  // packed_bilstm_tagger reads only Y; bilstm_seqlens has Y, Y_h and Y_c as graph outputs.
  auto tagger = load_model(kModels + "/packed_bilstm_tagger/model.onnx");
  ASSERT_TRUE(tagger.ok()) << tagger.status().message();
  EXPECT_EQ(rnn_outputs(*tagger->graph), (std::vector<std::vector<bool>>{{true, true, true}}));
  ASSERT_TRUE(drop_unread_rnn_states(*tagger->graph).ok());
  EXPECT_EQ(rnn_outputs(*tagger->graph), (std::vector<std::vector<bool>>{{true, false, false}}));

  auto seqlens = load_model(kModels + "/bilstm_seqlens/model.onnx");
  ASSERT_TRUE(seqlens.ok()) << seqlens.status().message();
  ASSERT_TRUE(drop_unread_rnn_states(*seqlens->graph).ok());
  EXPECT_EQ(rnn_outputs(*seqlens->graph), (std::vector<std::vector<bool>>{{true, true, true}}));
}

}  // namespace
}  // namespace recur::testing
