"""Recurrent model families as deployed, exported from PyTorch: tests/data/families.

Each family is a shape of model that ships in products, with the operators its export writes
around the RNNs:

- ds2: a DeepSpeech2-style recognizer (2-D convolutions over a spectrogram, BatchNorm, Hardtanh
  as Clip, bidirectional GRUs whose directions are summed, BatchNorm between them, LogSoftmax);
- ocr: an EasyOCR-style line recognizer (a VGG-style CNN, the height averaged away, two BiLSTMs
  with a projection between, batch_first);
- prosody: a Kokoro/StyleTTS2-style prosody predictor (an embedding, a BiLSTM over a packed
  batch of unequal lengths, a style-conditioned LayerNorm and instance norm, a depthwise
  ConvTranspose upsampling, durations and an F0 curve);
- nsnet: an NSNet2-style denoiser (Linear, two stacked GRUs with a state input, Linear layers,
  a sigmoid mask), opset 11;
- taco_step: one Tacotron2 decoder step (the prenet, two LSTMCells, which the exporter writes
  as Gemm, Split and gate activations, location-sensitive attention with a Conv1d over the
  attention weights, Softmax, a batched MatMul for the context);
- ppocr: a PaddleOCR-style mobile line recognizer (a MobileNetV3 backbone: depthwise
  convolutions, squeeze-and-excitation gates with HardSigmoid, HardSwish written as
  x * HardSigmoid(x) at opset 11; two stacked BiLSTMs, a softmax over the character set);
- umx: Open-Unmix's spectrogram model (time-major frames, a shared Linear over both channels'
  bins with BatchNorm and tanh, a 3-layer BiLSTM, skip concat, a ReLU mask on the mixture);
- rnnt_step: one greedy step of an RNN-T decoder (an embedding, an LSTM prediction network with
  its state, the joint network over a chunk of encoder frames, log-softmax);
- kws: a CRNN keyword spotter (a strided Conv2d over MFCCs, a 2-layer GRU, attention pooling);
- dfn_gru: DeepFilterNet's squeezed GRU (grouped linear layers as Einsum, a GRU with its state
  carried between frames, a skip connection, sigmoid gains), one frame and a whole clip;
- forecast: a batch LSTM forecaster (512 series of 48 steps, the horizon from the last step);
- dprnn: a dual-path RNN speech separator (a Conv1d encoder, 50%-overlapping chunks, BiLSTMs
  within and across the chunks with Linear, LayerNorm and residuals, sigmoid masks);
- resnet_ocr: a ResNet line recognizer (EasyOCR's and PaddleOCR's ResNet feature
  extractors: basic blocks of two 3x3 convolutions with BatchNorm, a 1x1 projection where the
  width changes, the residual sum and ReLU; max pools; a BiLSTM), whose channel counts are
  whole blocks of 16 at the small size too, so that CTest runs its CNN on channel-blocked
  tensors;
- conformer: a Conformer-encoder recognizer (two strided Conv2d over log-mel frames, Conformer
  blocks: macaron feed-forward layers with SiLU, ESPnet-style multi-head attention, a
  convolution module of GLU, depthwise Conv1d, BatchNorm and SiLU; then an LSTM and
  log-softmax), opset 14;
- word_lm (only with --full): a word-level LSTM language model with a 30k vocabulary.

Expected outputs come from PyTorch itself: the module run eagerly in float64 on the same inputs
(tools/models/common.py), never from recur. By default each family is written small (hidden
sizes of 16 to 64, a few hundred KiB) into tests/data/families for CTest; with `--full OUT` the
deployed sizes go into OUT for benchmarks (docs/bench-cpu.md): tens to hundreds of MiB.

Run with /usr/bin/python3 (Debian's python3-torch 1.13 and onnx 1.12).
"""

import argparse
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "models"))
import common  # noqa: E402


def trained_batch_norms(model):
    """Running statistics and affine values such as a trained model has."""
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, (nn.BatchNorm1d, nn.BatchNorm2d)):
                c = mod.num_features
                mod.running_mean.copy_(torch.randn(c) * 0.3)
                mod.running_var.copy_(torch.rand(c) + 0.5)
                mod.weight.copy_(torch.rand(c) + 0.5)
                mod.bias.copy_(torch.randn(c) * 0.1)
    return model


class DeepSpeech2(nn.Module):
    def __init__(self, freq, ch, hidden, layers, classes=29):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, ch, (21, 11), (2, 2), (10, 5), bias=False), nn.BatchNorm2d(ch),
            nn.Hardtanh(0, 20),
            nn.Conv2d(ch, ch, (11, 11), (2, 1), (5, 5), bias=False), nn.BatchNorm2d(ch),
            nn.Hardtanh(0, 20))
        f = (freq + 1) // 2
        f = (f + 1) // 2
        self.rnns = nn.ModuleList(
            [nn.GRU(ch * f if i == 0 else hidden, hidden, bidirectional=True)
             for i in range(layers)])
        self.bns = nn.ModuleList([nn.BatchNorm1d(hidden) for _ in range(layers - 1)])
        self.fc = nn.Linear(hidden, classes)

    def forward(self, spec):  # [B, 1, F, T]
        x = self.conv(spec)
        b, c, f, t = x.shape
        x = x.view(b, c * f, t).permute(2, 0, 1)
        for i, rnn in enumerate(self.rnns):
            if i > 0:
                tt, bb, h = x.shape
                x = self.bns[i - 1](x.reshape(tt * bb, h)).view(tt, bb, h)
            x, _ = rnn(x)
            x = x.view(x.shape[0], x.shape[1], 2, -1).sum(2)
        return F.log_softmax(self.fc(x), -1)


class LineOcr(nn.Module):
    def __init__(self, chans, hidden, classes=97):
        super().__init__()

        def block(i, o):
            return [nn.Conv2d(i, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU()]

        c1, c2, c3, c4 = chans
        self.cnn = nn.Sequential(*block(1, c1), nn.MaxPool2d(2, 2), *block(c1, c2),
                                 nn.MaxPool2d(2, 2), *block(c2, c3), *block(c3, c3),
                                 nn.MaxPool2d((2, 1), (2, 1)), *block(c3, c4),
                                 nn.MaxPool2d((2, 1), (2, 1)))
        self.l1 = nn.LSTM(c4, hidden, bidirectional=True, batch_first=True)
        self.p1 = nn.Linear(2 * hidden, hidden)
        self.l2 = nn.LSTM(hidden, hidden, bidirectional=True, batch_first=True)
        self.p2 = nn.Linear(2 * hidden, classes)

    def forward(self, img):  # [B, 1, 32, W]
        x = self.cnn(img).permute(0, 3, 1, 2).mean(3)  # [B, W/4, C]
        x, _ = self.l1(x)
        x, _ = self.l2(self.p1(x))
        return self.p2(x)


class BasicBlock(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(i, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o)
        self.c2, self.b2 = nn.Conv2d(o, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o)
        self.down = (None if i == o else
                     nn.Sequential(nn.Conv2d(i, o, 1, bias=False), nn.BatchNorm2d(o)))

    def forward(self, x):
        r = x if self.down is None else self.down(x)
        return F.relu(self.b2(self.c2(F.relu(self.b1(self.c1(x))))) + r)


class ResNetOcr(nn.Module):
    def __init__(self, chans, hidden, classes=97):
        super().__init__()
        c0, c1, c2, c3 = chans
        self.stem = nn.Sequential(nn.Conv2d(1, c0, 3, 1, 1), nn.BatchNorm2d(c0), nn.ReLU(),
                                  nn.MaxPool2d(2, 2))
        self.l1 = nn.Sequential(BasicBlock(c0, c1), BasicBlock(c1, c1), nn.MaxPool2d(2, 2))
        self.l2 = nn.Sequential(BasicBlock(c1, c2), nn.MaxPool2d((2, 1), (2, 1)))
        self.l3 = nn.Sequential(BasicBlock(c2, c3), nn.MaxPool2d((2, 1), (2, 1)))
        self.rnn = nn.LSTM(2 * c3, hidden, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, img):  # [B, 1, 32, W]
        x = self.l3(self.l2(self.l1(self.stem(img))))  # [B, C, 2, W/4]
        b, c, h, w = x.shape
        x, _ = self.rnn(x.permute(0, 3, 1, 2).reshape(b, w, c * h))
        return self.fc(x)


class AdaIN(nn.Module):
    """Instance norm (written out: the 1.13 exporter cannot size InstanceNormalization's
    channels here) scaled and shifted by a style vector."""

    def __init__(self, ch, style):
        super().__init__()
        self.fc = nn.Linear(style, 2 * ch)

    def forward(self, x, s):
        g, b = torch.chunk(self.fc(s).unsqueeze(2), 2, 1)
        m = x.mean(2, keepdim=True)
        v = ((x - m) ** 2).mean(2, keepdim=True)
        return (1 + g) * (x - m) / torch.sqrt(v + 1e-5) + b


class Prosody(nn.Module):
    def __init__(self, vocab, emb, style, hidden, durations=50):
        super().__init__()
        d = 2 * hidden
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb + style, hidden, batch_first=True, bidirectional=True)
        self.ln = nn.LayerNorm(d, elementwise_affine=False)
        self.style_fc = nn.Linear(style, 2 * d)
        self.dur = nn.Linear(d, durations)
        self.c1 = nn.Conv1d(d, d, 3, padding=1)
        self.a1 = AdaIN(d, style)
        self.up = nn.ConvTranspose1d(d, d, 3, stride=2, groups=d, padding=1, output_padding=1)
        self.c2 = nn.Conv1d(d, hidden, 3, padding=1)
        self.a2 = AdaIN(d, style)
        self.out = nn.Conv1d(hidden, 1, 1)

    def forward(self, tokens, lengths, style):
        x = self.emb(tokens)
        x = torch.cat([x, style.unsqueeze(1).expand(-1, x.shape[1], -1)], -1)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True,
                                                   enforce_sorted=False)
        y, _ = self.lstm(packed)
        y, _ = nn.utils.rnn.pad_packed_sequence(y, batch_first=True,
                                                total_length=tokens.shape[1])
        g, b = torch.chunk(self.style_fc(style).unsqueeze(1), 2, -1)
        y = (1 + g) * self.ln(y) + b
        durations = torch.sigmoid(self.dur(y)).sum(-1)
        h = F.leaky_relu(self.a1(self.c1(y.transpose(1, 2)), style), 0.2)
        h = F.leaky_relu(self.a2(self.up(h), style), 0.2)
        return durations, self.out(self.c2(h)).squeeze(1)


class NsNet(nn.Module):
    def __init__(self, bins, hidden, ff):
        super().__init__()
        self.fc1 = nn.Linear(bins, hidden)
        self.gru = nn.GRU(hidden, hidden, num_layers=2, batch_first=True)
        self.fc2 = nn.Linear(hidden, ff)
        self.fc3 = nn.Linear(ff, ff)
        self.fc4 = nn.Linear(ff, bins)

    def forward(self, x, h0):
        y, h = self.gru(torch.relu(self.fc1(x)), h0)
        y = torch.relu(self.fc3(torch.relu(self.fc2(y))))
        return torch.sigmoid(self.fc4(y)), h


class TacotronStep(nn.Module):
    def __init__(self, mels, prenet, enc, rnn, att, filters, kernel):
        super().__init__()
        self.prenet = nn.Sequential(nn.Linear(mels, prenet), nn.ReLU(), nn.Linear(prenet, prenet),
                                    nn.ReLU())
        self.attention_rnn = nn.LSTMCell(prenet + enc, rnn)
        self.decoder_rnn = nn.LSTMCell(rnn + enc, rnn)
        self.query = nn.Linear(rnn, att, bias=False)
        self.location_conv = nn.Conv1d(2, filters, kernel, padding=kernel // 2, bias=False)
        self.location_fc = nn.Linear(filters, att, bias=False)
        self.v = nn.Linear(att, 1, bias=False)
        self.proj = nn.Linear(rnn + enc, mels)
        self.gate = nn.Linear(rnn + enc, 1)

    def forward(self, frame, ah, ac, dh, dc, ctx, aw, awc, memory, pmem):
        ah, ac = self.attention_rnn(torch.cat([self.prenet(frame), ctx], -1), (ah, ac))
        loc = self.location_fc(self.location_conv(torch.stack([aw, awc], 1)).transpose(1, 2))
        e = self.v(torch.tanh(self.query(ah).unsqueeze(1) + loc + pmem)).squeeze(-1)
        aw = torch.softmax(e, -1)
        awc = awc + aw
        ctx = torch.bmm(aw.unsqueeze(1), memory).squeeze(1)
        dh, dc = self.decoder_rnn(torch.cat([ah, ctx], -1), (dh, dc))
        o = torch.cat([dh, ctx], -1)
        return self.proj(o), self.gate(o), ah, ac, dh, dc, ctx, aw, awc


class SqueezeExcite(nn.Module):
    def __init__(self, ch):
        super().__init__()
        self.c1 = nn.Conv2d(ch, ch // 4, 1)
        self.c2 = nn.Conv2d(ch // 4, ch, 1)

    def forward(self, x):
        return x * F.hardsigmoid(self.c2(F.relu(self.c1(F.adaptive_avg_pool2d(x, 1)))))


class MobileBlock(nn.Module):
    def __init__(self, i, e, o, k, stride, se, hswish):
        super().__init__()
        act = nn.Hardswish if hswish else nn.ReLU
        self.expand = nn.Sequential(nn.Conv2d(i, e, 1, bias=False), nn.BatchNorm2d(e), act())
        self.depthwise = nn.Sequential(nn.Conv2d(e, e, k, stride, k // 2, groups=e, bias=False),
                                       nn.BatchNorm2d(e), act())
        self.se = SqueezeExcite(e) if se else nn.Identity()
        self.project = nn.Sequential(nn.Conv2d(e, o, 1, bias=False), nn.BatchNorm2d(o))
        self.residual = stride == 1 and i == o

    def forward(self, x):
        y = self.project(self.se(self.depthwise(self.expand(x))))
        return x + y if self.residual else y


class MobileOcr(nn.Module):
    def __init__(self, width, hidden, classes):
        super().__init__()

        def w(c):
            return max(4, c * width // 96)

        self.stem = nn.Sequential(nn.Conv2d(3, w(16), 3, 2, 1, bias=False), nn.BatchNorm2d(w(16)),
                                  nn.Hardswish())
        # (in, expanded, out, kernel, stride, squeeze-excite, HardSwish): MobileNetV3-small with
        # the height halved and the width kept, as line recognizers do.
        cfg = [(16, 16, 16, 3, (2, 1), True, False), (16, 72, 24, 3, (2, 1), False, False),
               (24, 88, 24, 3, 1, False, False), (24, 96, 40, 5, (2, 1), True, True),
               (40, 240, 40, 5, 1, True, True), (40, 240, 40, 5, 1, True, True),
               (40, 120, 48, 5, 1, True, True), (48, 144, 48, 5, 1, True, True),
               (48, 288, 96, 5, 1, True, True), (96, 576, 96, 5, 1, True, True),
               (96, 576, 96, 5, 1, True, True)]
        self.blocks = nn.Sequential(*[MobileBlock(w(i), w(e), w(o), k, s, se, hs)
                                      for i, e, o, k, s, se, hs in cfg])
        self.last = nn.Sequential(nn.Conv2d(w(96), w(288), 1, bias=False),
                                  nn.BatchNorm2d(w(288)), nn.Hardswish())
        self.pool = nn.MaxPool2d(2, 2)
        self.lstm = nn.LSTM(w(288), hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(2 * hidden, classes)

    def forward(self, img):  # [B, 3, 32, W]
        x = self.pool(self.last(self.blocks(self.stem(img))))  # [B, C, 1, W/4]
        x, _ = self.lstm(x.squeeze(2).permute(0, 2, 1))
        return F.softmax(self.fc(x), -1)


class WordLm(nn.Module):
    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, 2)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, tok, h, c):
        y, (h, c) = self.lstm(self.emb(tok), (h, c))
        return torch.log_softmax(self.out(y), -1), h, c


class OpenUnmix(nn.Module):
    """Open-Unmix's spectrogram model: frames [T, B, C, F] (time-major), a shared Linear over the
    channels' bins with BatchNorm and tanh, a 3-layer BiLSTM, a skip concat, two Linear and
    BatchNorm layers and a ReLU mask on the mixture."""

    def __init__(self, bins, hidden, channels):
        super().__init__()
        self.bins, self.hidden, self.channels = bins, hidden, channels
        self.input_mean = nn.Parameter(torch.randn(bins) * 0.1)
        self.input_scale = nn.Parameter(torch.rand(bins) + 0.5)
        self.fc1 = nn.Linear(bins * channels, hidden, bias=False)
        self.bn1 = nn.BatchNorm1d(hidden)
        self.lstm = nn.LSTM(hidden, hidden // 2, num_layers=3, bidirectional=True, dropout=0.4)
        self.fc2 = nn.Linear(hidden * 2, hidden, bias=False)
        self.bn2 = nn.BatchNorm1d(hidden)
        self.fc3 = nn.Linear(hidden, bins * channels, bias=False)
        self.bn3 = nn.BatchNorm1d(bins * channels)
        self.output_scale = nn.Parameter(torch.rand(bins) + 0.5)
        self.output_mean = nn.Parameter(torch.rand(bins))

    def forward(self, mix):
        t, b = mix.shape[0], mix.shape[1]
        x = (mix + self.input_mean) * self.input_scale
        x = torch.tanh(self.bn1(self.fc1(x.reshape(-1, self.channels * self.bins))))
        x = x.reshape(t, b, self.hidden)
        y, _ = self.lstm(x)
        x = torch.cat([x, y], -1)
        x = F.relu(self.bn2(self.fc2(x.reshape(-1, 2 * self.hidden))))
        x = self.bn3(self.fc3(x)).reshape(t, b, self.channels, self.bins)
        return F.relu(x * self.output_scale + self.output_mean) * mix


class TransducerStep(nn.Module):
    """One greedy step of an RNN-T decoder: the prediction network (an embedding and an LSTM with
    its state as inputs and outputs) and the joint network over a chunk of encoder frames."""

    def __init__(self, vocab, emb, pred, enc, joint, layers):
        super().__init__()
        self.emb = nn.Embedding(vocab + 1, emb, padding_idx=vocab)
        self.lstm = nn.LSTM(emb, pred, layers, batch_first=True)
        self.enc_proj = nn.Linear(enc, joint)
        self.pred_proj = nn.Linear(pred, joint)
        self.out = nn.Linear(joint, vocab + 1)

    def forward(self, enc, token, h, c):  # enc [B, T, E], token [B, U]
        g, (h, c) = self.lstm(self.emb(token), (h, c))
        z = self.enc_proj(enc).unsqueeze(2) + self.pred_proj(g).unsqueeze(1)
        return torch.log_softmax(self.out(F.relu(z)), -1), h, c


class KeywordCrnn(nn.Module):
    """A CRNN keyword spotter: a strided Conv2d over MFCCs, a 2-layer GRU, attention pooling over
    time and a classifier."""

    def __init__(self, mfcc, ch, hidden, classes):
        super().__init__()
        self.conv = nn.Conv2d(1, ch, (20, 5), (8, 2))
        self.bn = nn.BatchNorm2d(ch)
        self.gru = nn.GRU(ch * ((mfcc - 20) // 8 + 1), hidden, 2, batch_first=True)
        self.att = nn.Linear(hidden, 1)
        self.fc = nn.Linear(hidden, classes)

    def forward(self, x):  # [B, 1, mfcc, T]
        x = F.relu(self.bn(self.conv(x)))
        x = x.flatten(1, 2).transpose(1, 2)  # [B, T', C*F']
        y, _ = self.gru(x)
        w = torch.softmax(self.att(y), 1)
        return F.log_softmax(self.fc((w * y).sum(1)), -1)


class GroupedLinear(nn.Module):
    """DeepFilterNet's grouped linear layer: one matrix per group of features, as an einsum."""

    def __init__(self, i, o, groups):
        super().__init__()
        self.groups = groups
        self.weight = nn.Parameter(torch.randn(groups, i // groups, o // groups) * (groups / i)**0.5)

    def forward(self, x):  # [B, T, I]
        x = x.reshape(x.shape[0], x.shape[1], self.groups, -1)
        return torch.einsum("btgi,gio->btgo", x, self.weight).flatten(2)


class SqueezedGruStack(nn.Module):
    """DeepFilterNet's squeezed GRU: grouped linear in, a GRU with its state carried between
    calls (one frame per call when streaming), grouped linear out, a skip connection."""

    def __init__(self, width, hidden, groups):
        super().__init__()
        self.lin_in = GroupedLinear(width, hidden, groups)
        self.gru = nn.GRU(hidden, hidden, 1, batch_first=True)
        self.lin_out = GroupedLinear(hidden, width, groups)
        self.gains = nn.Linear(width, 32)

    def forward(self, x, h):
        y, h = self.gru(F.relu(self.lin_in(x)), h)
        y = F.relu(self.lin_out(y)) + x
        return torch.sigmoid(self.gains(y)), h


class Forecaster(nn.Module):
    """A time-series forecaster as batch jobs run it: many series at once, a 2-layer LSTM over
    the history, the horizon from the last step."""

    def __init__(self, features, hidden, horizon):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, 2, batch_first=True)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, horizon))

    def forward(self, x):  # [B, T, F]
        y, _ = self.lstm(x)
        return self.head(y[:, -1])


class DualPathBlock(nn.Module):
    """One dual-path RNN block (DPRNN): a BiLSTM within each chunk (rows: every chunk of every
    utterance), a linear layer, a LayerNorm and a residual; then an LSTM across the chunks (rows:
    every position within a chunk)."""

    def __init__(self, feat, hidden):
        super().__init__()
        self.intra = nn.LSTM(feat, hidden, batch_first=True, bidirectional=True)
        self.intra_fc = nn.Linear(2 * hidden, feat)
        self.intra_norm = nn.LayerNorm(feat)
        self.inter = nn.LSTM(feat, hidden, batch_first=True, bidirectional=True)
        self.inter_fc = nn.Linear(2 * hidden, feat)
        self.inter_norm = nn.LayerNorm(feat)

    def forward(self, x):  # [B, S chunks, K positions, N]
        b, s, k, n = x.shape
        y, _ = self.intra(x.reshape(b * s, k, n))
        x = x + self.intra_norm(self.intra_fc(y)).reshape(b, s, k, n)
        z = x.transpose(1, 2).reshape(b * k, s, n)
        z, _ = self.inter(z)
        z = self.inter_norm(self.inter_fc(z)).reshape(b, k, s, n).transpose(1, 2)
        return x + z


class DualPathSeparator(nn.Module):
    """A DPRNN speech separator's mask network: a Conv1d encoder, 50%-overlapping chunks (the
    overlap-add written as the two halves of each chunk summed), dual-path blocks, masks."""

    def __init__(self, feat, hidden, chunk, blocks, speakers=2):
        super().__init__()
        self.chunk, self.speakers = chunk, speakers
        self.encoder = nn.Conv1d(1, feat, 16, 8, bias=False)
        self.blocks = nn.Sequential(*[DualPathBlock(feat, hidden) for _ in range(blocks)])
        self.mask = nn.Conv1d(feat, feat * speakers, 1)

    def forward(self, wav):  # [B, samples]; the frame count is a multiple of chunk / 2
        w = F.relu(self.encoder(wav.unsqueeze(1)))  # [B, N, L]
        b, n, frames = w.shape
        half = self.chunk // 2
        halves = w.transpose(1, 2).reshape(b, frames // half, half, n)
        chunks = torch.cat([halves[:, :-1], halves[:, 1:]], 2)  # [B, S, K, N], hop K/2
        y = self.blocks(chunks)
        # Overlap-add: each frame is the sum of the two chunks that hold it (the first and last
        # halves once).
        first, second = y[:, :, :half], y[:, :, half:]
        pad = torch.zeros_like(first[:, :1])
        y = torch.cat([first, pad], 1) + torch.cat([pad, second], 1)
        y = y.reshape(b, frames, n).transpose(1, 2)
        m = torch.sigmoid(self.mask(y)).reshape(b, self.speakers, n, frames)
        return m * w.unsqueeze(1)


class ConformerFeedForward(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm, self.up, self.down = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):  # half-step residual (the "macaron" form)
        return x + 0.5 * self.down(F.silu(self.up(self.norm(x))))


class SelfAttention(nn.Module):
    """ESPnet/WeNet-style multi-head self-attention: query, key and value projections, heads
    split by view and transpose, softmax of the scaled scores, the output projection."""

    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.out = (nn.Linear(d, d) for _ in range(4))

    def forward(self, x):  # [B, T, d]
        b, t, d = x.shape
        split = lambda y: y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        y = torch.matmul(torch.softmax(scores, dim=-1), v)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class ConformerBlock(nn.Module):
    def __init__(self, d, heads, kernel):
        super().__init__()
        self.ff1, self.ff2 = ConformerFeedForward(d), ConformerFeedForward(d)
        self.att_norm = nn.LayerNorm(d)
        self.att = SelfAttention(d, heads)
        self.conv_norm = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, kernel, padding=kernel // 2, groups=d)
        self.bn = nn.BatchNorm1d(d)
        self.pw2 = nn.Conv1d(d, d, 1)
        self.out_norm = nn.LayerNorm(d)

    def forward(self, x):  # [B, T, d]
        x = self.ff1(x)
        x = x + self.att(self.att_norm(x))
        y = F.glu(self.pw1(self.conv_norm(x).transpose(1, 2)), dim=1)
        x = x + self.pw2(F.silu(self.bn(self.dw(y)))).transpose(1, 2)
        return self.out_norm(self.ff2(x))


class ConformerLstm(nn.Module):
    """A streaming-ASR style encoder: two strided Conv2d over log-mel frames, Conformer blocks,
    an LSTM and the token projection."""

    def __init__(self, mels, d, heads, blocks, hidden, tokens, kernel=15):
        super().__init__()
        self.sub = nn.Sequential(nn.Conv2d(1, d, 3, 2), nn.ReLU(), nn.Conv2d(d, d, 3, 2), nn.ReLU())
        self.inp = nn.Linear(d * (((mels - 1) // 2 - 1) // 2), d)
        self.blocks = nn.Sequential(*[ConformerBlock(d, heads, kernel) for _ in range(blocks)])
        self.lstm = nn.LSTM(d, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, tokens)

    def forward(self, feats):  # [B, T, mels]
        x = self.sub(feats.unsqueeze(1))  # [B, d, T', mels']
        b, c, t, f = x.shape
        x = self.blocks(self.inp(x.transpose(1, 2).reshape(b, t, c * f)))
        return F.log_softmax(self.proj(self.lstm(x)[0]), dim=-1)


def emit(root, name, model, names_in, names_out, opset, dynamic, sets):
    """Exports `model` traced on sets[0] and writes every set with PyTorch's float64 outputs."""
    model.eval()
    d = common.fresh_dir(name, root)
    common.export(model, tuple(common.to_tensor(a) for a in sets[0]), os.path.join(d, "model.onnx"),
                  names_in, names_out, opset, dynamic)
    for k, inputs in enumerate(sets):
        outputs = common.run_eager(model, inputs, rtol=1e-3, atol=1e-4)
        common.write_data_set(d, k, names_in, inputs, names_out, outputs)
    opset, ops, size = common.summary(os.path.join(d, "model.onnx"))
    print("%s: opset %d, %d nodes, %.1f MiB" % (d, opset, sum(ops.values()), size / 2**20))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", metavar="OUT", help="the deployed sizes, into OUT")
    a = ap.parse_args()
    full = a.full is not None
    root = a.full or os.path.join(common.REPO_ROOT, "tests", "data", "families")
    os.makedirs(root, exist_ok=True)
    rng = common.seed(5)

    def f(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    freq, time = (81, 200) if full else (21, 24)
    m = trained_batch_norms(DeepSpeech2(freq, 32 if full else 4, 256 if full else 16,
                                        3 if full else 2))
    emit(root, "ds2", m, ["spec"], ["logp"], 13, {"spec": {0: "B", 3: "T"}},
         [[f(1, 1, freq, time)], [f(2, 1, freq, time * 3 // 5)]])

    m = trained_batch_norms(LineOcr((32, 64, 128, 256) if full else (4, 8, 8, 16),
                                    128 if full else 12))
    width = 128 if full else 24
    emit(root, "ocr", m, ["img"], ["logits"], 13, {"img": {0: "B", 3: "W"}},
         [[f(1, 1, 32, width)], [f(3, 1, 32, width * 3 // 4)]])

    vocab = 178
    m = Prosody(vocab, 128 if full else 12, 64 if full else 8, 128 if full else 10)
    style = 64 if full else 8

    def prosody_set(lengths):
        # The exporter traces the batch size into the packed LSTM's initial state: every set
        # has the traced batch of two.
        tokens = rng.integers(0, vocab, (2, max(lengths))).astype(np.int64)
        return [tokens, np.array(lengths, np.int64), f(2, style)]

    emit(root, "prosody", m, ["tokens", "lengths", "style"], ["durations", "f0"], 14,
         {"tokens": {1: "T"}},
         [prosody_set([40, 31] if full else [9, 6]), prosody_set([25, 25] if full else [4, 7])])

    bins, hidden, ff = (257, 400, 600) if full else (17, 12, 20)
    m = NsNet(bins, hidden, ff)
    emit(root, "nsnet", m, ["x", "h0"], ["mask", "h"], 11, {"x": {0: "B", 1: "T"}, "h0": {1: "B"}},
         [[f(1, 100 if full else 9, bins), f(2, 1, hidden, scale=0.1)],
          [f(3, 30 if full else 4, bins), f(2, 3, hidden, scale=0.1)],
          [f(1, 1, bins), f(2, 1, hidden, scale=0.1)]])

    mels, prenet, enc, rnn, att, filters, kernel = ((80, 256, 512, 1024, 128, 32, 31) if full
                                                    else (6, 8, 10, 12, 6, 4, 5))
    m = TacotronStep(mels, prenet, enc, rnn, att, filters, kernel)

    def taco_set(batch, length):
        aw = np.abs(f(batch, length))
        aw /= aw.sum(-1, keepdims=True)
        return ([f(batch, mels)] + [f(batch, rnn, scale=0.1) for _ in range(4)] +
                [f(batch, enc, scale=0.1), aw, 2 * aw, f(batch, length, enc, scale=0.1),
                 f(batch, length, att, scale=0.1)])

    names = ["frame", "ah", "ac", "dh", "dc", "ctx", "aw", "awc", "memory", "pmem"]
    dynamic = {n: {0: "B"} for n in names}
    for n in ("aw", "awc", "memory", "pmem"):
        dynamic[n] = {0: "B", 1: "L"}
    emit(root, "taco_step", m, names,
         ["mel", "gate", "ah_out", "ac_out", "dh_out", "dc_out", "ctx_out", "aw_out", "awc_out"],
         13, dynamic, [taco_set(1, 150 if full else 11), taco_set(2, 77 if full else 6)])

    m = trained_batch_norms(MobileOcr(96 if full else 12, 48 if full else 8,
                                      6625 if full else 37))
    width = 320 if full else 40
    emit(root, "ppocr", m, ["x"], ["probs"], 11, {"x": {0: "B", 3: "W"}},
         [[f(1, 3, 32, width)], [f(2, 3, 32, width // 2)]])

    bins, hidden = (1487, 512) if full else (13, 12)
    m = trained_batch_norms(OpenUnmix(bins, hidden, 2))
    frames = 255 if full else 7
    emit(root, "umx", m, ["mix"], ["target"], 13, {"mix": {0: "T", 1: "B"}},
         [[np.abs(f(frames, 1, 2, bins))], [np.abs(f(frames // 2, 2, 2, bins))]])

    vocab, emb, pred, enc, joint = (1024, 320, 640, 512, 640) if full else (11, 6, 8, 10, 9)
    m = TransducerStep(vocab, emb, pred, enc, joint, 1 if full else 2)
    layers = 1 if full else 2

    def rnnt_set(b, t, u):
        return [f(b, t, enc), rng.integers(0, vocab + 1, (b, u)).astype(np.int64),
                f(layers, b, pred, scale=0.1), f(layers, b, pred, scale=0.1)]

    emit(root, "rnnt_step", m, ["enc", "token", "h", "c"], ["logp", "h_out", "c_out"], 13,
         {"enc": {0: "B", 1: "T"}, "token": {0: "B", 1: "U"}, "h": {1: "B"}, "c": {1: "B"}},
         [rnnt_set(1, 1, 1), rnnt_set(2, 3, 2)])

    mfcc, time = 40, (98 if full else 21)
    m = trained_batch_norms(KeywordCrnn(mfcc, 32 if full else 4, 64 if full else 8, 12))
    emit(root, "kws", m, ["mfcc"], ["logp"], 13, {"mfcc": {0: "B", 3: "T"}},
         [[f(1, 1, mfcc, time)], [f(3, 1, mfcc, time + 6)]])

    width, hidden, groups = (512, 256, 8) if full else (16, 8, 4)
    m = SqueezedGruStack(width, hidden, groups)
    emit(root, "dfn_gru", m, ["x", "h0"], ["gains", "h"], 14,
         {"x": {0: "B", 1: "T"}, "h0": {1: "B"}},
         [[f(1, 1, width), f(1, 1, hidden, scale=0.1)],
          [f(2, 300 if full else 5, width), f(1, 2, hidden, scale=0.1)]])

    m = Forecaster(8, 64 if full else 10, 24 if full else 4)
    emit(root, "forecast", m, ["history"], ["horizon"], 13, {"history": {0: "B", 1: "T"}},
         [[f(512 if full else 6, 48 if full else 9, 8)], [f(3, 5, 8)]])

    feat, hidden, chunk, blocks = (64, 128, 100, 2) if full else (6, 5, 8, 2)
    m = DualPathSeparator(feat, hidden, chunk, blocks)
    frames = 40 * chunk if full else 3 * chunk  # 79 chunks at the full size (4 s at 8 kHz)

    def dprnn_set(b, n_frames):
        return [f(b, (n_frames - 1) * 8 + 16)]

    emit(root, "dprnn", m, ["wav"], ["masked"], 13, {"wav": {0: "B", 1: "samples"}},
         [dprnn_set(1, frames), dprnn_set(2, frames // 2 if full else chunk)])

    m = trained_batch_norms(ResNetOcr((32, 64, 128, 256) if full else (16, 16, 32, 32),
                                      128 if full else 12))
    width = 200 if full else 20
    emit(root, "resnet_ocr", m, ["img"], ["logits"], 13, {"img": {0: "B", 3: "W"}},
         [[f(1, 1, 32, width)], [f(2, 1, 32, width * 3 // 5)]])

    mels, frames = (80, 400) if full else (20, 40)
    m = trained_batch_norms(ConformerLstm(mels, 256 if full else 16, 4 if full else 2,
                                          4 if full else 2, 320 if full else 12,
                                          500 if full else 30))
    emit(root, "conformer", m, ["feats"], ["logp"], 14, {"feats": {0: "B", 1: "T"}},
         [[f(1, frames, mels)], [f(2, frames * 3 // 5, mels)]])

    if full:
        vocab, hidden = 30000, 1024
        m = WordLm(vocab, 512, hidden)

        def lm_set(t, b):
            return [rng.integers(0, vocab, (t, b)).astype(np.int64), f(2, b, hidden, scale=0.1),
                    f(2, b, hidden, scale=0.1)]

        emit(root, "word_lm", m, ["tok", "h0", "c0"], ["logp", "h", "c"], 13,
             {"tok": {0: "T", 1: "B"}, "h0": {1: "B"}, "c0": {1: "B"}},
             [lm_set(1, 1), lm_set(35, 1), lm_set(10, 4)])


if __name__ == "__main__":
    main()
