// A 3x3 convolution's constant weights in the Winograd layouts of oneDNN 2.6's float32 kernels,
// made by recur instead of oneDNN's reorder.
//
// oneDNN's reorder into these layouts (its `wino_reorder`) transforms each pair of channels with
// scalar loops and writes the result element by element: on the Zen 5, 16 ms a 256 x 256 matrix
// and 128 ms for resnet_ocr's eight, all of it in the first run of each input shape (the layout
// depends on the shape, so it cannot be made at load). Here each pair of an input channel and 16
// output channels is one set of vector products, written a run of 16 output channels at a time.
//
// The layouts (oneDNN's wino_desc; a the row and b the column of the alpha x alpha tile, ic and
// oc the padded channel counts, blocks of icb and ocb channels, oc2 and ic2 blocks of blocks):
//   aaOIoi      [a][b][oc/ocb][ic/icb][ocb][icb]       (2x3; oneDNN's int8 kernels)
//   aaOio       [a][b][oc/ocb][ic/icb][icb][ocb]       (2x3)
//   aaOBiOo     [a][b][oc/(oc2*ocb)][ic/icb][icb][oc2][ocb]   (2x3)
//   OBaaIBOIio  [oc/(oc2*ocb)][a][b][ic/(ic2*icb)][oc2][ic2][icb][ocb]   (4x3)
// Each tile is G g G^T for the 3x3 kernel g and oneDNN's G: F(2x2, 3x3)'s points 0, 1, -1 and
// infinity, and its F(4x4, 3x3) with scaled rows. WinogradWeights tests check every layout
// against oneDNN's own reorder.
#pragma once

#include <dnnl.hpp>

namespace recur::onednn {

// Writes `w` (described by `plain`, float32 oihw of 3x3 kernels) into `out`, laid out as
// `packed` asks; false, writing nothing, where `packed` is not one of the float32 Winograd
// layouts above or `plain` is not dense oihw within its channels (the caller then reorders
// with oneDNN). Needs AVX-512F, as oneDNN's Winograd kernels do. `jobs` parts of the output
// channels run on the job pool (job_pool.h), the caller taking one.
bool winograd_weights(const dnnl::memory::desc& plain, const float* w,
                      const dnnl::memory::desc& packed, float* out, int jobs = 1);

}  // namespace recur::onednn
