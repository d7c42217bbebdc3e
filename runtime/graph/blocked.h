// Channel-blocked tensors, the internal nodes of runtime/engine/optimize's blocking pass
// (block_channels.cc): where a provider's convolutions want their channels in blocks of b
// innermost (oneDNN's nChw16c), a chain of convolutions, pools and elementwise nodes keeps its
// tensors that way from one node to the next, instead of each convolution copying X into the
// blocked layout and Y back out of it (a CRNN's five convolutions at batch 64 spent a fifth of
// the model's time in those copies).
//
// The blocked form of X [N, C, spatial...] (C a multiple of b) is the ordinary tensor
// [N, C/b, spatial..., b] whose element (n, c/b, s..., c%b) is X's element (n, c, s...). Its
// shape says what it holds, so every operator that reads one computes on it as written: a
// MaxPool or AveragePool of kernel [k..., 1] (stride 1 and no padding on the last axis) pools
// each channel's plane as the 4-D pool does, and elementwise operators are unchanged.
//
//   recur::ToBlocked:   X [N, C, spatial...] -> its blocked form; attribute block (int, b).
//   recur::FromBlocked: the blocked form [N, C/b, spatial..., b] -> X [N, C, spatial...].
//   recur::BlockedConv: a 2-D Conv or FusedConv (fused_conv.h) whose Y is blocked, and X
//     blocked [N, C/bx, H, W, bx] (its block bx its last axis) or plain [N, C, H, W] (a
//     chain's first convolution, of a few input channels: oneDNN's first-layer kernels read
//     those plain); inputs, outputs and attributes the Conv's (W [M, C/group, kH, kW] and B [M]
//     as the model holds them), plus block, Y's; M a multiple of block.
//
// A chain may also run channels-last: each value in one block of all its channels, [N, 1, H,
// W, C], which is NHWC (oneDNN's brgconv layout). Its BlockedConvs then read X of block C and
// write Y of block M.
#pragma once

namespace recur {

inline constexpr const char* kBlockedDomain = "recur";
inline constexpr const char* kToBlockedOp = "ToBlocked";
inline constexpr const char* kFromBlockedOp = "FromBlocked";
inline constexpr const char* kBlockedConvOp = "BlockedConv";
inline constexpr const char* kBlockAttr = "block";

}  // namespace recur
