// Graph rewrites applied after loading and before partitioning.
#pragma once

#include <functional>
#include <vector>

#include "runtime/core/status.h"
#include "runtime/graph/graph.h"

namespace recur {

// Turns Constant nodes into initializers (in subgraphs too), so that providers see weights
// produced by Constant nodes as constants they can repack at load time.
Status fold_constant_nodes(Graph& graph);

// Folds each inference BatchNormalization whose input is a Conv (constant weights, read by
// nothing else) into that Conv's weights and bias. float32 and float64, computed in double.
Status fold_batchnorm_into_conv(Graph& graph);

// Folds each inference BatchNormalization whose input is a MatMul's 2-D output (B a constant
// [K, C], the output read by nothing else) into B's columns, the BatchNormalization becoming
// an Add of its shift (which fuse_matmul_bias then takes as the MatMul's bias). Needs inferred
// shapes (the output's rank).
Status fold_batchnorm_into_matmul(Graph& graph);

// Drops the Y_h and Y_c outputs of LSTM, GRU and RNN nodes (in subgraphs too) that nothing
// reads and that are no graph output, so that kernels see them as not requested.
Status drop_unread_rnn_states(Graph& graph);

// Stacked RNN fusion (runtime/rnn/stacked_rnn.h): each chain of two or more single-layer LSTM,
// GRU or RNN nodes with equal attributes, layout 0, no peepholes and the same sequence_lens,
// where layer l+1 reads layer l's Y only through Squeeze(axis 1) (one direction) or
// Transpose(0,2,1,3) + Reshape(0,0,-1) (two directions), and nothing else reads that Y or the
// glue, becomes one recur::StackedRNN node if `accept` agrees. The fused node carries a note
// naming the layers and the glue it replaced.
using FusionFilter = std::function<bool(const Node& fused, const Graph& graph)>;
Status fuse_stacked_rnns(Graph& graph, const FusionFilter& accept);

// Whether a fusion may replace `original` (the node whose provider decides) by `fused`.
using NodeFusionFilter =
    std::function<bool(const Node& original, const Node& fused, const Graph& graph)>;

// Batch-first RNNs (fold_rnn_layout.cc): each LSTM, GRU or RNN node of layout 0 whose X is
// Transpose(1,0,2) of a batch-first tensor (or a folded layer's output) and whose Y is unread or
// reaches a Transpose(1,0,2) back to batch-first (or a folded layer) through Squeeze(axes 1) or
// Transpose(0,2,1,3) + Reshape(0,0,-1), takes layout 1 (opset 14) where `accept` agrees given
// the node and its layout-1 form: the transposes go, the glue becomes one Reshape(0,0,-1), and
// the states it has get a Transpose(1,0,2) each. Top-level graph only. The node carries a note
// naming what was removed. `*folded` says whether any node was; shape inference must run
// again if so.
Status fold_rnn_layouts(Graph& graph, const NodeFusionFilter& accept, bool* folded);

// Each Conv whose output only a Relu or Sigmoid reads (and is no graph output) becomes one
// recur::FusedConv node (runtime/graph/fused_conv.h) writing the activation's output, in
// subgraphs too, where `accept` agrees given the Conv and the fused node. The fused node keeps
// the Conv's name and carries a note naming both.
Status fuse_conv_activations(Graph& graph, const NodeFusionFilter& accept);

// Each exact GELU written as Div (or Mul), Erf, Add, Mul and Mul (fuse_gelu.cc has the forms)
// becomes one Gelu node of opset 20, in subgraphs too, where `accept` agrees given the Erf and
// the fused node. The fused node keeps the Erf's name and carries a note naming the five.
Status fuse_gelus(Graph& graph, const NodeFusionFilter& accept);

// Each HardSwish written as Mul(x, HardSigmoid(x)) with alpha 1/6 and beta 0.5 becomes one
// HardSwish node of opset 14, and each SiLU written as Mul(x, Sigmoid(x)) one Swish node of
// opset 24 (fuse_swish.cc), in subgraphs too, where `accept` agrees given the HardSigmoid or
// Sigmoid and the fused node. The fused node keeps the gate's name and carries a note naming
// both.
Status fuse_swishes(Graph& graph, const NodeFusionFilter& accept);

// Each layer normalization written as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul and
// Add over the last axes (fuse_layer_norm.cc has the conditions) becomes one
// LayerNormalization node of opset 17, in subgraphs too, where `accept` agrees given the first
// ReduceMean and the fused node. The fused node keeps that ReduceMean's name and carries a note
// naming the nine.
Status fuse_layer_norms(Graph& graph, const NodeFusionFilter& accept);

// Each MatMul by a constant 2-D B whose output only an Add of a constant bias over the last
// axis reads, with the Relu or Gelu that alone reads the sum where there is one, becomes one
// recur::MatMulBias node (runtime/graph/matmul_bias.h, fuse_matmul.cc), in subgraphs too,
// where `accept` agrees given the MatMul and the fused node. The fused node keeps the MatMul's
// name and carries a note naming the nodes it replaced.
Status fuse_matmul_bias(Graph& graph, const NodeFusionFilter& accept);

// The blocking pass (block_channels.cc): where the provider that runs them wants channel blocks
// of `block` (ExecutionProvider::channel_block), each chain of 2-D Conv/FusedConv nodes (one
// group, constant W), undilated MaxPool/AveragePool nodes and the activations between them, of
// float32 [N, C, H, W] tensors whose C is known and a multiple of `block`, with a convolution
// and at least one more convolution or pool, passes channel-blocked tensors
// (runtime/graph/blocked.h): its convolutions become recur::BlockedConv, its pools pool the
// blocked form, a recur::ToBlocked copies in each value it reads from outside and a
// recur::FromBlocked copies out each value read outside (keeping its name). `accept` is asked
// for each node given its blocked form. Where `channels_last` says so of a chain (given its
// nodes in their plain forms), the chain passes its tensors channels-last instead: each value's
// block is its own channel count (the blocked form [N, 1, H, W, C], NHWC), and its first
// convolution reads a copy of X in that form too. Top-level graph only; `*changed` says whether
// shapes must be inferred again.
using ChainLayoutFilter =
    std::function<bool(const std::vector<const Node*>& chain, const Graph& graph)>;
Status block_conv_chains(Graph& graph, int64_t block, const NodeFusionFilter& accept, bool* changed,
                         const ChainLayoutFilter& channels_last = {});

// ONNX Runtime's com.microsoft operators, as its optimizer, quantizers and PyTorch export
// helper write them (the fusions FusedConv, FusedGemm, FusedMatMul, the GELUs, the skip
// normalizations, the int8 MatMuls: lower_contrib.cc; Attention, MultiHeadAttention,
// GroupQueryAttention, EmbedLayerNormalization, RotaryEmbedding: lower_attention.cc; the
// QLinear operators, its quantization operators, MatMulNBits: lower_qlinear.cc; its
// ONNX-domain SimplifiedLayerNormalization and LayerNormalization before opset 17), become the
// ONNX nodes they compute, in subgraphs too.
// The node that does the operator's work keeps its name, with a note saying what it was.
// Nodes are taken in topological order, each taking the type of the contrib node it reads;
// one that needs a rank shape inference has not found yet (FusedMatMul's transpositions
// depend on it) waits for `infer`, which runs over the whole graph after each round that
// lowered something. Fails, naming the node, on a form ONNX Runtime refuses or recur cannot
// express.
Status lower_contrib_ops(Graph& graph, const std::function<Status(Graph&)>& infer);

// The passes that need no provider, in order: Constant nodes to initializers, BatchNorm into
// Conv, unread RNN states dropped. Each leaves the graph finalized.
Status optimize_graph(Graph& graph);

}  // namespace recur
