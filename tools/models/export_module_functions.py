"""module_functions: a residual LSTM block and a residual GRU block exported as ONNX model-local
functions, as torch.onnx.export(export_modules_as_functions=...) writes them.

features float32 [N, T, 8] -> LstmBlock(LSTM(8, 16), Linear(16, 8), LayerNorm(8))
-> GruBlock(GRU(8, 12), Linear(12, 8), LayerNorm(8)) -> Linear(8, 3) -> scores float32
[N, T, 3], each block out = LayerNorm(x + 0.5 * Linear(RNN(x))). Opset 15, batch and sequence
dynamic. The two blocks and LayerNorm become FunctionProtos: the block bodies call the
LayerNorm function, and their RNN's hidden_size and a Constant's value are attribute
references (ref_attr_name) to the call's attributes, so the model exercises nested calls and
attribute substitution against PyTorch's outputs.
"""

import sys

import numpy as np
import torch
from torch import nn

import common

NAME = "module_functions"
FEATURES, LSTM_HIDDEN, GRU_HIDDEN, CLASSES = 8, 16, 12, 3


class Block(nn.Module):
    """out = LayerNorm(x + 0.5 * Linear(rnn(x))). Each subclass becomes a function of its own."""

    def __init__(self, rnn, hidden):
        super().__init__()
        self.rnn = rnn(FEATURES, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, FEATURES)
        self.norm = nn.LayerNorm(FEATURES)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.norm(x + 0.5 * self.proj(y))


class LstmBlock(Block):
    def __init__(self):
        super().__init__(nn.LSTM, LSTM_HIDDEN)


class GruBlock(Block):
    def __init__(self):
        super().__init__(nn.GRU, GRU_HIDDEN)


# The exporter names a function's domain after its class's module: fixed, so that the file is
# the same whether this script runs alone or from export_all.py.
LstmBlock.__module__ = GruBlock.__module__ = "__main__"


class ModuleFunctions(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm_block = LstmBlock()
        self.gru_block = GruBlock()
        self.head = nn.Linear(FEATURES, CLASSES)

    def forward(self, features):
        return self.head(self.gru_block(self.lstm_block(features)))


def main(root=None):
    rng = common.seed(1011)
    model = ModuleFunctions().eval()
    d = common.fresh_dir(NAME, root)
    trace = rng.standard_normal((2, 5, FEATURES)).astype(np.float32)
    m = common.export(model, (torch.from_numpy(trace),), d + "/model.onnx", ["features"],
                      ["scores"], opset=15,
                      dynamic_axes={"features": {0: "batch", 1: "seq"}, "scores": {0: "batch", 1: "seq"}},
                      export_modules_as_functions={LstmBlock, GruBlock, nn.LayerNorm})
    assert {f.name for f in m.functions} == {"LstmBlock", "GruBlock", "LayerNorm"}, m.functions
    for k, shape in enumerate([(2, 5, FEATURES), (3, 9, FEATURES), (1, 1, FEATURES)]):
        x = rng.standard_normal(shape).astype(np.float32)
        common.write_data_set(d, k, ["features"], [x], ["scores"], common.run_eager(model, [x]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
