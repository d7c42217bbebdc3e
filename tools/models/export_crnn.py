"""crnn: a small convolutional-recurrent sequence labeller (CTC-style output).

features float32 [N, C=16, T=32] -> Conv1d(16, 32, k=3, pad=1) -> BatchNorm1d(32) (eval)
-> ReLU -> MaxPool1d(2) -> [T/2, N, 32] -> LSTM(32, 32, bidirectional=True)
-> Linear(64, 20) -> LogSoftmax -> log_probs float32 [T/2=16, N, 20]. Opset 13.
The module is exported in eval mode with TrainingMode.PRESERVE so that the exporter does not
fold the BatchNorm into the Conv: the graph keeps a BatchNormalization node (running stats).
"""

import sys

import numpy as np
import torch
from torch import nn

import common

NAME = "crnn"
FEATURES, CHANNELS, HIDDEN, CLASSES = 16, 32, 32, 20


class Crnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(FEATURES, CHANNELS, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm1d(CHANNELS)
        self.pool = nn.MaxPool1d(2)
        self.lstm = nn.LSTM(CHANNELS, HIDDEN, bidirectional=True)
        self.head = nn.Linear(2 * HIDDEN, CLASSES)

    def forward(self, features):
        x = self.pool(torch.relu(self.bn(self.conv(features))))  # [N, C, T']
        y, _ = self.lstm(x.permute(2, 0, 1))  # [T', N, 2H]
        return torch.log_softmax(self.head(y), dim=-1)


def main(root=None):
    rng = common.seed(1003)
    model = Crnn()
    # Non-trivial running statistics, as a trained model would have.
    with torch.no_grad():
        model.bn.running_mean.copy_(torch.randn(CHANNELS) * 0.3)
        model.bn.running_var.copy_(torch.rand(CHANNELS) + 0.5)
        model.bn.weight.copy_(torch.rand(CHANNELS) + 0.5)
        model.bn.bias.copy_(torch.randn(CHANNELS) * 0.1)
    model.eval()
    d = common.fresh_dir(NAME, root)
    x = rng.standard_normal((2, FEATURES, 32)).astype(np.float32)
    common.export(model, (torch.from_numpy(x),), d + "/model.onnx", ["features"], ["log_probs"],
                  opset=13, training=torch.onnx.TrainingMode.PRESERVE)
    common.write_data_set(d, 0, ["features"], [x], ["log_probs"], common.run_eager(model, [x]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
