"""char_lstm_lm: a character-level LSTM language model.

tokens int64 [N, T] -> Embedding(V=40, 32) -> LSTM(32, 64, num_layers=2, batch_first=True)
-> Linear(64, V) -> LogSoftmax -> log_probs float32 [N, T, V]. Opset 14, batch and sequence
axes dynamic (traced at N=2, T=12; the data set runs N=3, T=17).
The exporter wraps the LSTMs in Gather (embedding), Shape/Gather/Unsqueeze/Concat/
ConstantOfShape/Slice (zero initial states), Transpose (batch_first), Squeeze (the direction
axis of Y) and MatMul/Add (the Linear).
"""

import sys

import numpy as np
import torch
from torch import nn

import common

NAME = "char_lstm_lm"
VOCAB, EMB, HIDDEN, LAYERS = 40, 32, 64, 2


class CharLstmLm(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.lstm = nn.LSTM(EMB, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(HIDDEN, VOCAB)

    def forward(self, tokens):
        y, _ = self.lstm(self.embed(tokens))
        return torch.log_softmax(self.head(y), dim=-1)


def main(root=None):
    rng = common.seed(1001)
    model = CharLstmLm().eval()
    d = common.fresh_dir(NAME, root)
    trace = rng.integers(0, VOCAB, size=(2, 12), dtype=np.int64)
    common.export(model, (torch.from_numpy(trace),), d + "/model.onnx", ["tokens"],
                  ["log_probs"], opset=14,
                  dynamic_axes={"tokens": {0: "batch", 1: "seq"},
                                "log_probs": {0: "batch", 1: "seq"}})
    tokens = rng.integers(0, VOCAB, size=(3, 17), dtype=np.int64)
    common.write_data_set(d, 0, ["tokens"], [tokens], ["log_probs"],
                          common.run_eager(model, [tokens]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
