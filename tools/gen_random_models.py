#!/usr/bin/python3
"""Writes tests/data/random/prenet_lstm_noise/model.onnx: a PyTorch export of the pattern TTS
decoders keep at inference, dropout that stays on (F.dropout(training=True), exported as
Dropout with training_mode=true) before an LSTM, and Gaussian noise added to its output
(torch.randn_like, exported as RandomNormalLike). Its outputs are random, so it has no expected
outputs: the tests compare providers under one seed and check the seeds' rules
(tests/providers/reference/random/random_ops_test.cc).

Run with /usr/bin/python3 (torch, onnx): /usr/bin/python3 tools/gen_random_models.py
"""
import os
import warnings

import torch
import torch.nn.functional as F
from torch import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "random",
                   "prenet_lstm_noise")


class Prenet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 16)
        self.lstm = nn.LSTM(16, 12, batch_first=True)
        self.out = nn.Linear(12, 4)

    def forward(self, x):
        h = F.dropout(F.relu(self.fc(x)), p=0.5, training=True)
        y, _ = self.lstm(h)
        return self.out(y + 0.1 * torch.randn_like(y))


def main():
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter warns that dropout stays on: it should
        torch.onnx.export(Prenet().eval(), (torch.randn(2, 5, 8),), os.path.join(OUT, "model.onnx"),
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "N", 1: "T"}, "y": {0: "N", 1: "T"}},
                          opset_version=17)


if __name__ == "__main__":
    main()
