"""attention_lstm_classifier: an LSTM encoder with additive attention pooling.

x float32 [N, T, 10] -> LSTM(10, 32, batch_first=True) -> scores = Linear(32, 1)(tanh(
Linear(32, 32)(y))) -> softmax over time -> context = sum_t weights * y -> Linear(32, 4)
-> probs = softmax -> probs float32 [N, 4], attention float32 [N, T]. Opset 13 (ReduceSum takes
its axes as an input), batch and sequence axes dynamic (traced at N=2, T=6; the data set runs
N=3, T=9).
"""

import sys

import numpy as np
import torch
from torch import nn

import common

NAME = "attention_lstm_classifier"
INPUT, HIDDEN, CLASSES = 10, 32, 4


class AttentionLstmClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(INPUT, HIDDEN, batch_first=True)
        self.proj = nn.Linear(HIDDEN, HIDDEN)
        self.score = nn.Linear(HIDDEN, 1)
        self.head = nn.Linear(HIDDEN, CLASSES)

    def forward(self, x):
        y, _ = self.lstm(x)  # [N, T, H]
        scores = self.score(torch.tanh(self.proj(y))).squeeze(-1)  # [N, T]
        weights = torch.softmax(scores, dim=1)
        context = (weights.unsqueeze(-1) * y).sum(dim=1)  # [N, H]
        return torch.softmax(self.head(context), dim=-1), weights


def main(root=None):
    rng = common.seed(1009)
    model = AttentionLstmClassifier().eval()
    d = common.fresh_dir(NAME, root)
    trace = rng.standard_normal((2, 6, INPUT)).astype(np.float32)
    common.export(model, (torch.from_numpy(trace),), d + "/model.onnx", ["x"],
                  ["probs", "attention"], opset=13,
                  dynamic_axes={"x": {0: "batch", 1: "seq"}, "probs": {0: "batch"},
                                "attention": {0: "batch", 1: "seq"}})
    x = rng.standard_normal((3, 9, INPUT)).astype(np.float32)
    common.write_data_set(d, 0, ["x"], [x], ["probs", "attention"], common.run_eager(model, [x]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
