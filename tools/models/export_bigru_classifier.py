"""bigru_classifier: a bidirectional GRU text classifier.

tokens int64 [N, T] -> Embedding(V=50, 24) -> GRU(24, 32, bidirectional=True, batch_first=True)
-> features = concat(final forward state, final backward state, mean over time of the outputs)
[N, 4*32] -> Linear(128, 5) -> logits float32 [N, 5]. Opset 13.
Covers the GRU's Y_h (direction slices through Gather), ReduceMean over time and Concat.
"""

import sys

import numpy as np
import torch
from torch import nn

import common

NAME = "bigru_classifier"
VOCAB, EMB, HIDDEN, CLASSES = 50, 24, 32, 5


class BiGruClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.gru = nn.GRU(EMB, HIDDEN, bidirectional=True, batch_first=True)
        self.head = nn.Linear(4 * HIDDEN, CLASSES)

    def forward(self, tokens):
        y, h_n = self.gru(self.embed(tokens))  # y [N, T, 2H], h_n [2, N, H]
        features = torch.cat([h_n[0], h_n[1], y.mean(dim=1)], dim=1)
        return self.head(features)


def main(root=None):
    rng = common.seed(1002)
    model = BiGruClassifier().eval()
    d = common.fresh_dir(NAME, root)
    tokens = rng.integers(0, VOCAB, size=(3, 10), dtype=np.int64)
    common.export(model, (torch.from_numpy(tokens),), d + "/model.onnx", ["tokens"], ["logits"],
                  opset=13)
    common.write_data_set(d, 0, ["tokens"], [tokens], ["logits"],
                          common.run_eager(model, [tokens]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
