"""dynamic_lstm: an LSTM encoder exported with dynamic batch and sequence axes.

x float32 [batch, seq, 12] -> LSTM(12, 24, num_layers=2, batch_first=True)
-> y float32 [batch, seq, 24], h_n float32 [2, batch, 24]. Opset 14.
The export traces batch 2, seq 5; the data sets run other sizes: test_data_set_0 is
batch 2, seq 7 and test_data_set_1 is batch 3, seq 13, so nothing traced may stay fixed.
"""

import sys

import numpy as np
import torch
from torch import nn

import common

NAME = "dynamic_lstm"
INPUT, HIDDEN, LAYERS = 12, 24, 2
DATA_SETS = [(2, 7), (3, 13)]  # (batch, seq)


class DynamicLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(INPUT, HIDDEN, num_layers=LAYERS, batch_first=True)

    def forward(self, x):
        y, (h_n, _) = self.lstm(x)
        return y, h_n


def main(root=None):
    rng = common.seed(1007)
    model = DynamicLstm().eval()
    d = common.fresh_dir(NAME, root)
    trace = torch.from_numpy(rng.standard_normal((2, 5, INPUT)).astype(np.float32))
    common.export(model, (trace,), d + "/model.onnx", ["x"], ["y", "h_n"], opset=14,
                  dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"},
                                "h_n": {1: "batch"}})
    for k, (n, t) in enumerate(DATA_SETS):
        x = rng.standard_normal((n, t, INPUT)).astype(np.float32)
        common.write_data_set(d, k, ["x"], [x], ["y", "h_n"], common.run_eager(model, [x]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
