#include "converters/onednn_weights.h"

#include <algorithm>
#include <string>

#include "runtime/core/checked_math.h"
#include "runtime/core/code_layout.h"
#include "runtime/core/page_discard.h"

namespace recur {

namespace {

constexpr int kLstmOrder[] = {kOnnxLstmI, kOnnxLstmF, kOnnxLstmC, kOnnxLstmO};
constexpr int kGruOrder[] = {kOnnxGruZ, kOnnxGruR, kOnnxGruH};
constexpr int kRnnOrder[] = {0};
constexpr int kOnednnLstmF = 1;  // position of f in oneDNN's LSTM order

RECUR_LOAD_PATH Status check_geometry(const OnednnRnnGeometry& g, int64_t in) {
  if (g.directions < 1 || g.directions > 2 || g.hidden <= 0 || in <= 0) {
    return invalid_argument(
        "oneDNN weight conversion: bad geometry D=" + std::to_string(g.directions) +
        " H=" + std::to_string(g.hidden) + " in=" + std::to_string(in));
  }
  // The buffer sizes and offsets below are products of these; rnn_spec refuses models that
  // overflow them, and this keeps a direct caller from wrapping them too.
  if (!checked_product({g.directions, 2 * g.gates(), g.hidden, std::max(g.hidden, in), 8})) {
    return invalid_argument(
        "oneDNN weight conversion: sizes overflow 64 bits for D=" + std::to_string(g.directions) +
        " H=" + std::to_string(g.hidden) + " in=" + std::to_string(in));
  }
  if (g.input_forget && g.cell != RnnCell::kLstm) {
    return invalid_argument("oneDNN weight conversion: input_forget applies only to LSTM");
  }
  return ok_status();
}

// The ONNX gate block feeding oneDNN gate `og`, and the sign it enters with.
struct Source {
  int block;
  float sign;
};
Source source_of(const OnednnRnnGeometry& g, int og) {
  if (g.cell == RnnCell::kLstm && g.input_forget && og == kOnednnLstmF) return {kOnnxLstmI, -1.0f};
  return {onednn_gate_to_onnx(g.cell)[static_cast<size_t>(og)], 1.0f};
}

}  // namespace

RECUR_LOAD_PATH OnednnRnnGeometry OnednnRnnGeometry::of(const RnnSpec& spec, int64_t input_size,
                                                        int64_t hidden) {
  OnednnRnnGeometry g;
  g.cell = spec.cell;
  g.linear_before_reset = spec.linear_before_reset;
  g.input_forget = spec.input_forget;
  g.directions = spec.num_directions();
  g.input_size = input_size;
  g.hidden = hidden;
  return g;
}

std::span<const int> onednn_gate_to_onnx(RnnCell cell) {
  switch (cell) {
    case RnnCell::kLstm:
      return kLstmOrder;
    case RnnCell::kGru:
      return kGruOrder;
    case RnnCell::kRnn:
      return kRnnOrder;
  }
  return {};
}

RECUR_LOAD_PATH Status onnx_to_onednn_weights(const OnednnRnnGeometry& g, const float* onnx,
                                              int64_t in, OnednnWeightsFormat format, float* out,
                                              bool discard_source) {
  RECUR_RETURN_IF_ERROR(check_geometry(g, in));
  const int64_t G = g.gates(), H = g.hidden;
  for (int64_t d = 0; d < g.directions; ++d) {
    const float* src_d = onnx + d * G * H * in;
    float* dst_d = out + d * G * H * in;
    for (int64_t og = 0; og < G; ++og) {
      const Source s = source_of(g, static_cast<int>(og));
      const float* blk = src_d + s.block * H * in;  // [H, in] row-major
      // A block that a later gate reads again (input_forget's f is the negated i) is kept.
      bool read_again = false;
      for (int64_t later = og + 1; later < G; ++later)
        read_again = read_again || source_of(g, static_cast<int>(later)).block == s.block;
      DiscardBehind behind;
      if (discard_source && !read_again) behind = DiscardBehind(blk, blk + H * in);
      if (format == OnednnWeightsFormat::kLdgoi) {
        float* o = dst_d + og * H * in;
        for (int64_t k = 0; k < H * in; ++k) o[k] = s.sign * blk[k];
        behind.read_to(blk + H * in);
      } else {  // ldigo: [in][G][H]
        // A transpose, by tiles that stay in the cache: element by element, each write of a
        // large matrix would land G*H floats from the last (lstm_large's repack took most of
        // its load time that way).
        constexpr int64_t kTile = 32;
        for (int64_t h0 = 0; h0 < H; h0 += kTile) {
          const int64_t h1 = std::min(H, h0 + kTile);
          for (int64_t i0 = 0; i0 < in; i0 += kTile) {
            const int64_t i1 = std::min(in, i0 + kTile);
            for (int64_t i = i0; i < i1; ++i) {
              float* o = dst_d + (i * G + og) * H;
              for (int64_t h = h0; h < h1; ++h) o[h] = s.sign * blk[h * in + i];
            }
          }
          behind.read_to(blk + h1 * in);
        }
      }
    }
  }
  return ok_status();
}

RECUR_LOAD_PATH std::vector<int64_t> onnx_rows_in_ldigo(const OnednnRnnGeometry& g) {
  const int64_t G = g.gates(), H = g.hidden;
  std::vector<int64_t> rows(static_cast<size_t>(G * H), -1);
  for (int64_t og = 0; og < G; ++og) {
    const Source s = source_of(g, static_cast<int>(og));
    if (s.sign < 0) continue;  // derived: derive_ldigo_blocks
    for (int64_t h = 0; h < H; ++h) rows[static_cast<size_t>(s.block * H + h)] = og * H + h;
  }
  return rows;
}

RECUR_LOAD_PATH void derive_ldigo_blocks(const OnednnRnnGeometry& g, int64_t in, float* ldigo) {
  const int64_t G = g.gates(), H = g.hidden;
  for (int64_t og = 0; og < G; ++og) {
    const Source s = source_of(g, static_cast<int>(og));
    if (s.sign > 0) continue;
    // The negation of the gate that takes the same ONNX block as it is.
    int64_t from = 0;
    for (; from < G; ++from) {
      const Source f = source_of(g, static_cast<int>(from));
      if (f.block == s.block && f.sign > 0) break;
    }
    for (int64_t i = 0; i < in && from < G; ++i) {
      float* row = ldigo + i * G * H;
      for (int64_t h = 0; h < H; ++h) row[og * H + h] = -row[from * H + h];
    }
  }
}

RECUR_LOAD_PATH Status onnx_to_onednn_bias(const OnednnRnnGeometry& g, const float* onnx_b,
                                           float* out) {
  RECUR_RETURN_IF_ERROR(check_geometry(g, 1));
  const int64_t G = g.gates(), H = g.hidden, Gb = g.bias_gates();
  if (!onnx_b) {
    std::fill(out, out + g.bias_size(), 0.0f);
    return ok_status();
  }
  for (int64_t d = 0; d < g.directions; ++d) {
    const float* wb = onnx_b + d * 2 * G * H;
    const float* rb = wb + G * H;
    float* o = out + d * Gb * H;
    for (int64_t og = 0; og < G; ++og) {
      const Source s = source_of(g, static_cast<int>(og));
      const bool lbr_h = g.cell == RnnCell::kGru && g.linear_before_reset && s.block == kOnnxGruH;
      for (int64_t h = 0; h < H; ++h) {
        const float w = wb[s.block * H + h], r = rb[s.block * H + h];
        // LBR-GRU keeps Rb of h apart: it is scaled by r together with Rh*H.
        o[og * H + h] = s.sign * (lbr_h ? w : w + r);
      }
    }
    if (Gb == 4 && g.cell == RnnCell::kGru) {
      for (int64_t h = 0; h < H; ++h) o[3 * H + h] = rb[kOnnxGruH * H + h];
    }
  }
  return ok_status();
}

Status onnx_to_onednn_peephole(const OnednnRnnGeometry& g, const float* onnx_p, float* out) {
  RECUR_RETURN_IF_ERROR(check_geometry(g, 1));
  if (g.cell != RnnCell::kLstm) return invalid_argument("peepholes apply only to LSTM");
  const int64_t H = g.hidden;
  if (!onnx_p) {
    std::fill(out, out + g.peephole_size(), 0.0f);
    return ok_status();
  }
  for (int64_t d = 0; d < g.directions; ++d) {
    const float* p = onnx_p + d * 3 * H;
    float* o = out + d * 3 * H;
    for (int k = 0; k < 3; ++k) {
      int block = kOnednnPeepholeToOnnx[static_cast<size_t>(k)];
      float sign = 1.0f;
      // Under input_forget, f's pre-activation is the negated i pre-activation, peephole
      // included (both read C_{t-1}).
      if (g.input_forget && k == 1) {
        block = 0;
        sign = -1.0f;
      }
      for (int64_t h = 0; h < H; ++h) o[k * H + h] = sign * p[block * H + h];
    }
  }
  return ok_status();
}

Status onednn_to_onnx_weights(const OnednnRnnGeometry& g, const float* onednn, int64_t in,
                              OnednnWeightsFormat format, float* onnx) {
  RECUR_RETURN_IF_ERROR(check_geometry(g, in));
  const int64_t G = g.gates(), H = g.hidden;
  const auto order = onednn_gate_to_onnx(g.cell);
  for (int64_t d = 0; d < g.directions; ++d) {
    const float* src_d = onednn + d * G * H * in;
    float* dst_d = onnx + d * G * H * in;
    for (int64_t og = 0; og < G; ++og) {
      float* blk = dst_d + order[static_cast<size_t>(og)] * H * in;
      if (format == OnednnWeightsFormat::kLdgoi) {
        const float* s = src_d + og * H * in;
        std::copy(s, s + H * in, blk);
      } else {
        for (int64_t h = 0; h < H; ++h) {
          for (int64_t i = 0; i < in; ++i) blk[h * in + i] = src_d[(i * G + og) * H + h];
        }
      }
    }
  }
  return ok_status();
}

Status onednn_to_onnx_bias(const OnednnRnnGeometry& g, const float* onednn_b, float* onnx_b) {
  RECUR_RETURN_IF_ERROR(check_geometry(g, 1));
  const int64_t G = g.gates(), H = g.hidden, Gb = g.bias_gates();
  const auto order = onednn_gate_to_onnx(g.cell);
  for (int64_t d = 0; d < g.directions; ++d) {
    const float* b = onednn_b + d * Gb * H;
    float* wb = onnx_b + d * 2 * G * H;
    float* rb = wb + G * H;
    std::fill(rb, rb + G * H, 0.0f);
    for (int64_t og = 0; og < G; ++og) {
      const int block = order[static_cast<size_t>(og)];
      std::copy(b + og * H, b + (og + 1) * H, wb + block * H);
    }
    if (Gb == 4 && g.cell == RnnCell::kGru) {
      std::copy(b + 3 * H, b + 4 * H, rb + kOnnxGruH * H);
    }
  }
  return ok_status();
}

Status onednn_to_onnx_peephole(const OnednnRnnGeometry& g, const float* onednn_p, float* onnx_p) {
  RECUR_RETURN_IF_ERROR(check_geometry(g, 1));
  if (g.cell != RnnCell::kLstm) return invalid_argument("peepholes apply only to LSTM");
  const int64_t H = g.hidden;
  for (int64_t d = 0; d < g.directions; ++d) {
    const float* p = onednn_p + d * 3 * H;
    float* o = onnx_p + d * 3 * H;
    for (int k = 0; k < 3; ++k) {
      const int block = kOnednnPeepholeToOnnx[static_cast<size_t>(k)];
      std::copy(p + k * H, p + (k + 1) * H, o + block * H);
    }
  }
  return ok_status();
}

}  // namespace recur
