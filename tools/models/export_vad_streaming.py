"""vad_streaming: a streaming voice-activity model shaped like the widely deployed ones (issue 13).

x float32 [1, 512] (16 kHz) or [1, 256] (8 kHz), state float32 [2, 1, 128] (h, c), sr int64
scalar -> prob float32 [1, 1], state_n float32 [2, 1, 128]. Opset 16. The whole network sits
inside an ONNX `If` on sr == 16000 (a scripted branch, as in the real model), each branch with its
own front end: a Conv1d whose fixed weights are a windowed DFT basis (an STFT: 256 taps, hop 128
at 16 kHz; 128 taps, hop 64 at 8 kHz) after a reflect pad, magnitude by Pow and Sqrt, four
Conv1d+ReLU blocks, then an LSTM (H=128) over the single frame left, one step per call with the
state passed in and out, and a Conv1d(128, 1, 1)+Sigmoid head averaged over time. The
LSTM and head are shared by both branches (the real model has two sets; one keeps the file small).

test_data_set_0 is a 16 kHz chunk, test_data_set_1 an 8 kHz chunk, each from a random state.
"""

import sys

import numpy as np
import torch
from torch import nn

import common

NAME = "vad_streaming"
HIDDEN = 128


def stft_basis(n_fft):
    """Real and imaginary rows of a Hann-windowed DFT, as Conv1d weights [2 * bins, 1, n_fft]."""
    bins = n_fft // 2 + 1
    n = np.arange(n_fft)
    window = 0.5 - 0.5 * np.cos(2 * np.pi * n / n_fft)
    k = np.arange(bins)[:, None]
    real = np.cos(2 * np.pi * k * n / n_fft) * window
    imag = -np.sin(2 * np.pi * k * n / n_fft) * window
    return torch.from_numpy(np.concatenate([real, imag])[:, None, :].astype(np.float32))


class FrontEnd(nn.Module):
    """STFT magnitude and the conv encoder: [1, samples] -> [1, 128, 1]."""

    def __init__(self, n_fft, channels):
        super().__init__()
        self.n_fft = n_fft
        self.bins = n_fft // 2 + 1
        self.stft = nn.Conv1d(1, 2 * self.bins, n_fft, stride=n_fft // 2, bias=False)
        self.stft.weight.data.copy_(stft_basis(n_fft))
        c = channels
        self.encoder = nn.Sequential(
            nn.Conv1d(self.bins, c, 3, padding=1), nn.ReLU(),
            nn.Conv1d(c, c, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(c, c, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv1d(c, HIDDEN, 3, padding=1), nn.ReLU())

    def forward(self, x):
        x = nn.functional.pad(x.unsqueeze(1), (0, self.n_fft // 4), mode="reflect")
        spec = self.stft(x)
        real, imag = spec[:, :self.bins], spec[:, self.bins:]
        mag = torch.sqrt(real.pow(2) + imag.pow(2))
        return self.encoder(mag)


class Decoder(nn.Module):
    """One LSTM step on the encoder's last frame, then the sigmoid head."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(HIDDEN, HIDDEN)
        self.head = nn.Conv1d(HIDDEN, 1, 1)

    def forward(self, feat, state):
        step = feat[:, :, -1:].permute(2, 0, 1)  # [1 step, batch 1, 128]
        y, (h, c) = self.lstm(step, (state[0:1], state[1:2]))
        out = torch.sigmoid(self.head(torch.relu(y.permute(1, 2, 0))))
        return out.mean(dim=2), torch.cat([h, c], dim=0)


class Branch(nn.Module):
    def __init__(self, front, decoder):
        super().__init__()
        self.front = front
        self.decoder = decoder

    def forward(self, x, state):
        return self.decoder(self.front(x), state)


class Vad(nn.Module):
    """Scripted: the branch on sr becomes an ONNX If holding the whole network."""

    def __init__(self, b16, b8):
        super().__init__()
        self.b16 = b16
        self.b8 = b8

    def forward(self, x, state, sr):
        if bool(sr == 16000):
            prob, state_n = self.b16(x, state)
        else:
            prob, state_n = self.b8(x, state)
        return prob, state_n


def build():
    decoder = Decoder()
    eager16 = Branch(FrontEnd(256, 64), decoder).eval()
    eager8 = Branch(FrontEnd(128, 32), decoder).eval()
    return eager16, eager8


def main(root=None):
    rng = common.seed(1013)
    eager16, eager8 = build()
    d = common.fresh_dir(NAME, root)
    names_in, names_out = ["x", "state", "sr"], ["prob", "state_n"]

    def state():
        return (rng.standard_normal((2, 1, HIDDEN)) * 0.5).astype(np.float32)

    x16 = (rng.standard_normal((1, 512)) * 0.3).astype(np.float32)
    x8 = (rng.standard_normal((1, 256)) * 0.3).astype(np.float32)
    s16, s8 = state(), state()
    with torch.no_grad():
        t16 = torch.jit.trace(eager16, (torch.from_numpy(x16), torch.from_numpy(s16)))
        t8 = torch.jit.trace(eager8, (torch.from_numpy(x8), torch.from_numpy(s8)))
    scripted = torch.jit.script(Vad(t16, t8))
    sr16, sr8 = np.array(16000, np.int64), np.array(8000, np.int64)
    common.export(
        scripted, (torch.from_numpy(x16), torch.from_numpy(s16), torch.from_numpy(sr16)),
        d + "/model.onnx", names_in, names_out, opset=16, dynamic_axes={"x": {1: "samples"}})
    # Expected outputs: the eager modules (float64), the branch chosen as the If chooses.
    common.write_data_set(d, 0, names_in, [x16, s16, sr16], names_out,
                          common.run_eager(eager16, [x16, s16]))
    common.write_data_set(d, 1, names_in, [x8, s8, sr8], names_out,
                          common.run_eager(eager8, [x8, s8]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
