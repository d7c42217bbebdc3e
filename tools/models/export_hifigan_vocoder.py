"""hifigan_vocoder: a small HiFi-GAN-style generator, the vocoder that follows a TTS model.

mel float32 [1, 20, frames] -> Conv1d(20, 32, k=7) -> two upsampling stages, each
LeakyReLU(0.1) -> ConvTranspose1d(k=2u, stride u, padding u/2) (u = 4, then 4) and a
multi-receptive-field block (two residual blocks, kernels 3 and 7, dilations 1 and 3, averaged)
-> LeakyReLU -> Conv1d(8, 1, k=7) -> tanh -> audio float32 [1, 1, 16 * frames]. Opset 13, the
frame count dynamic. No RNN: it covers the transposed and dilated convolutions and the
residual glue that vocoders put after the sequence models.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

import common

NAME = "hifigan_vocoder"
MELS, CHANNELS, UPSAMPLE, KERNELS, DILATIONS = 20, 32, (4, 4), (3, 7), (1, 3)


class ResBlock(nn.Module):
    def __init__(self, ch, k):
        super().__init__()
        self.dilated = nn.ModuleList(
            [nn.Conv1d(ch, ch, k, dilation=d, padding=(k * d - d) // 2) for d in DILATIONS])
        self.plain = nn.ModuleList([nn.Conv1d(ch, ch, k, padding=(k - 1) // 2) for _ in DILATIONS])

    def forward(self, x):
        for a, b in zip(self.dilated, self.plain):
            x = x + b(F.leaky_relu(a(F.leaky_relu(x, 0.1)), 0.1))
        return x


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = nn.Conv1d(MELS, CHANNELS, 7, padding=3)
        self.ups, self.blocks = nn.ModuleList(), nn.ModuleList()
        ch = CHANNELS
        for u in UPSAMPLE:
            self.ups.append(nn.ConvTranspose1d(ch, ch // 2, 2 * u, stride=u, padding=u // 2))
            ch //= 2
            self.blocks.append(nn.ModuleList([ResBlock(ch, k) for k in KERNELS]))
        self.post = nn.Conv1d(ch, 1, 7, padding=3)

    def forward(self, mel):
        x = self.pre(mel)
        for up, blocks in zip(self.ups, self.blocks):
            x = up(F.leaky_relu(x, 0.1))
            x = sum(block(x) for block in blocks) / len(blocks)
        return torch.tanh(self.post(F.leaky_relu(x)))


def main(root=None):
    rng = common.seed(1011)
    model = Generator().eval()
    d = common.fresh_dir(NAME, root)
    traced = rng.standard_normal((1, MELS, 12)).astype(np.float32)
    common.export(model, (torch.from_numpy(traced),), d + "/model.onnx", ["mel"], ["audio"],
                  opset=13, dynamic_axes={"mel": {2: "frames"}, "audio": {2: "samples"}})
    # A frame count other than the traced one, so that a frozen shape shows up.
    mel = rng.standard_normal((1, MELS, 17)).astype(np.float32)
    common.write_data_set(d, 0, ["mel"], [mel], ["audio"], common.run_eager(model, [mel]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
