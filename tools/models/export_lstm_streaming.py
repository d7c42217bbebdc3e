"""lstm_streaming: a streaming LSTM whose state goes in and out of the graph.

x float32 [N, T, 20], h0/c0 float32 [2, N, 40] -> LSTM(20, 40, num_layers=2, batch_first=True)
-> Linear(40, 12) -> y float32 [N, T, 12], h_n/c_n float32 [2, N, 40]. Opset 14, batch and
chunk length dynamic. A caller runs it chunk by chunk and feeds h_n/c_n back as h0/c0.

test_data_set_0 is one chunk from a random state. stream/ holds a whole sequence cut into
chunks of different lengths, starting from zero state: chunk_K/x.pb is the input of chunk K and
chunk_K/{y,h_n,c_n}.pb are PyTorch's outputs after running chunks 0..K in order
(tests/models/lstm_streaming_test.cc feeds recur's own state back and compares).
"""

import os
import sys

import numpy as np
import torch
from torch import nn

import common

NAME = "lstm_streaming"
INPUT, HIDDEN, LAYERS, OUT = 20, 40, 2, 12
BATCH = 2
CHUNKS = [4, 6, 1, 3, 5]  # lengths of the stream's chunks


class StreamingLstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(INPUT, HIDDEN, num_layers=LAYERS, batch_first=True)
        self.head = nn.Linear(HIDDEN, OUT)

    def forward(self, x, h0, c0):
        y, (h_n, c_n) = self.lstm(x, (h0, c0))
        return self.head(y), h_n, c_n


def main(root=None):
    rng = common.seed(1004)
    model = StreamingLstm().eval()
    d = common.fresh_dir(NAME, root)
    names_in, names_out = ["x", "h0", "c0"], ["y", "h_n", "c_n"]

    def state(scale):
        return (rng.standard_normal((LAYERS, BATCH, HIDDEN)) * scale).astype(np.float32)

    x = rng.standard_normal((BATCH, 5, INPUT)).astype(np.float32)
    h0, c0 = state(0.5), state(0.5)
    common.export(model, tuple(torch.from_numpy(a) for a in (x, h0, c0)), d + "/model.onnx",
                  names_in, names_out, opset=14,
                  dynamic_axes={"x": {0: "batch", 1: "chunk"}, "h0": {1: "batch"},
                                "c0": {1: "batch"}, "y": {0: "batch", 1: "chunk"},
                                "h_n": {1: "batch"}, "c_n": {1: "batch"}})
    common.write_data_set(d, 0, names_in, [x, h0, c0], names_out,
                          common.run_eager(model, [x, h0, c0]))

    # The stream: PyTorch runs the chunks in order, carrying its own state.
    seq = rng.standard_normal((BATCH, sum(CHUNKS), INPUT)).astype(np.float32)
    h = np.zeros((LAYERS, BATCH, HIDDEN), np.float32)
    c = np.zeros_like(h)
    ys = []
    t = 0
    for k, n in enumerate(CHUNKS):
        xk = seq[:, t:t + n]
        t += n
        y, h64, c64 = common.run_eager(model, [xk, h, c])
        # Carry the float32 state, as a streaming caller would.
        h, c = h64.astype(np.float32), c64.astype(np.float32)
        ys.append(y)
        cd = os.path.join(d, "stream", "chunk_%d" % k)
        os.makedirs(cd)
        common.write_tensor(os.path.join(cd, "x.pb"), xk, "x")
        common.write_tensor(os.path.join(cd, "y.pb"), y, "y")
        common.write_tensor(os.path.join(cd, "h_n.pb"), h, "h_n")
        common.write_tensor(os.path.join(cd, "c_n.pb"), c, "c_n")
    # Chunking must not change the result: the whole sequence in one call gives the same.
    zero = np.zeros((LAYERS, BATCH, HIDDEN), np.float32)
    y_all, h_all, c_all = common.run_eager(model, [seq, zero, zero])
    np.testing.assert_allclose(np.concatenate(ys, axis=1), y_all, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, h_all, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c, c_all, rtol=1e-5, atol=1e-6)
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
