"""rnnoise_gru: an RNNoise-style noise-suppression network (Valin 2018), with PyTorch GRUs.

features float32 [N, T, 42]
  dense     = tanh(Linear(42, 24)(features))
  vad_gru   = GRU(24, 24)(dense);                              vad   = sigmoid(Linear(24, 1))
  noise_gru = GRU(24 + 24 + 42, 48)(concat(dense, vad_gru, features))
  denoise   = GRU(24 + 48 + 42, 96)(concat(vad_gru, noise_gru, features))
  gains     = sigmoid(Linear(96, 22)(denoise))
-> gains float32 [N, T, 22], vad float32 [N, T, 1]. Opset 12 (Squeeze/Unsqueeze take their axes
as attributes), batch_first GRUs, so every GRU is wrapped in Transpose/Squeeze and its zero
initial state is built from Shape.
"""

import sys

import numpy as np
import torch
from torch import nn

import common

NAME = "rnnoise_gru"
FEATURES, BANDS = 42, 22


class RnnoiseGru(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(FEATURES, 24)
        self.vad_gru = nn.GRU(24, 24, batch_first=True)
        self.vad_out = nn.Linear(24, 1)
        self.noise_gru = nn.GRU(24 + 24 + FEATURES, 48, batch_first=True)
        self.denoise_gru = nn.GRU(24 + 48 + FEATURES, 96, batch_first=True)
        self.denoise_out = nn.Linear(96, BANDS)

    def forward(self, features):
        dense = torch.tanh(self.dense(features))
        vad_gru, _ = self.vad_gru(dense)
        vad = torch.sigmoid(self.vad_out(vad_gru))
        noise_gru, _ = self.noise_gru(torch.cat([dense, vad_gru, features], dim=-1))
        denoise, _ = self.denoise_gru(torch.cat([vad_gru, noise_gru, features], dim=-1))
        gains = torch.sigmoid(self.denoise_out(denoise))
        return gains, vad


def main(root=None):
    rng = common.seed(1005)
    model = RnnoiseGru().eval()
    d = common.fresh_dir(NAME, root)
    x = rng.standard_normal((2, 15, FEATURES)).astype(np.float32)
    common.export(model, (torch.from_numpy(x),), d + "/model.onnx", ["features"],
                  ["gains", "vad"], opset=12)
    common.write_data_set(d, 0, ["features"], [x], ["gains", "vad"],
                          common.run_eager(model, [x]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
