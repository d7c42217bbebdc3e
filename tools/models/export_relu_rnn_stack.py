"""relu_rnn_stack: a stacked Elman RNN with ReLU activations.

x float32 [T=9, N=3, 16] -> RNN(16, 32, num_layers=3, nonlinearity='relu') -> Linear(32, 8)
-> y float32 [T, N, 8], h_n float32 [3, N, 32]. Opset 11 (Squeeze/Unsqueeze with attributes;
the RNN nodes carry activations=['Relu']).
"""

import sys

import numpy as np
import torch
from torch import nn

import common

NAME = "relu_rnn_stack"
INPUT, HIDDEN, LAYERS, OUT = 16, 32, 3, 8


class ReluRnnStack(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(INPUT, HIDDEN, num_layers=LAYERS, nonlinearity="relu")
        self.head = nn.Linear(HIDDEN, OUT)

    def forward(self, x):
        y, h_n = self.rnn(x)
        return self.head(y), h_n


def main(root=None):
    rng = common.seed(1006)
    model = ReluRnnStack().eval()
    d = common.fresh_dir(NAME, root)
    x = rng.standard_normal((9, 3, INPUT)).astype(np.float32)
    common.export(model, (torch.from_numpy(x),), d + "/model.onnx", ["x"], ["y", "h_n"],
                  opset=11)
    common.write_data_set(d, 0, ["x"], [x], ["y", "h_n"], common.run_eager(model, [x]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
