#!/usr/bin/python3
"""Writes tests/data/nchwc/<case>/: PyTorch models with convolutions before their recurrent
layers, as ONNX Runtime 1.30 saves them at its default optimization level ('all') on this
machine, which puts the convolutions, pools and resizes in its blocked NCHWc layout
(com.microsoft.nchwc; recur lowers it: runtime/engine/optimize/lower_nchwc.cc).

The expected outputs are PyTorch's; each saved model is also run through ONNX Runtime
(tools/ort_oracle.py), which must agree with PyTorch, so that a case is one ONNX Runtime reads
as it wrote it. Every case must hold NCHWc nodes, and together they cover: a convolution
reading NCHW input, blocked convolutions, depthwise ones, channel counts padded to a block,
BatchNormalization as a depthwise convolution, a fused Add (the Conv's Sum input), fused
activations with parameters, MaxPool (ceil_mode), AveragePool, GlobalAveragePool,
GlobalMaxPool, nearest and linear Upsample, the Reshapes around an Add whose operands'
shapes ONNX Runtime cannot prove equal, NHWC in and out (ReorderInput and ReorderOutput with
channels_last), a channel Concat, and inputs whose batch and width differ from the export's.

The block is the saving machine's: 16 where the CPU has AVX-512 (the CTest cases run only on
such a CPU, tests/CMakeLists.txt), 8 with AVX2 only.

Usage: /usr/bin/python3 tools/gen_nchwc_tests.py [--out tests/data/nchwc]
"""

import argparse
import os
import shutil
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

from ort_oracle import ort_outputs

HERE = os.path.dirname(os.path.abspath(__file__))


def models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class CrnnOcr(nn.Module):
        """Text-line recognizer: a CNN over a 1-channel image, a BiLSTM over its columns."""

        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(1, 32, 3, padding=1)
            self.c2 = nn.Conv2d(32, 64, 3, padding=1)
            self.bn = nn.BatchNorm2d(64)
            self.dw = nn.Conv2d(64, 64, 3, padding=1, groups=64)
            self.pw = nn.Conv2d(64, 48, 1)
            self.lstm = nn.LSTM(48 * 4, 32, bidirectional=True)
            self.fc = nn.Linear(64, 20)

        def forward(self, x):
            y = F.max_pool2d(F.relu(self.c1(x)), 2)
            c = self.c2(y)
            y = F.avg_pool2d(F.relu(self.bn(c)), (2, 1))
            y = F.relu(self.dw(y)) + y
            y = torch.sigmoid(self.pw(y))
            y = F.interpolate(y, scale_factor=(1, 2), mode="nearest")
            b, ch, h, w = y.shape
            o, _ = self.lstm(y.permute(3, 0, 1, 2).reshape(w, b, ch * h))
            return F.log_softmax(self.fc(o), -1), F.adaptive_avg_pool2d(c, 1)

    class PaddedNhwc(nn.Module):
        """Channel counts that are not whole blocks (20, 40, 24), NHWC in and out, linear and
        nearest resizes added together, a dilated convolution, LeakyRelu and clamp."""

        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv2d(3, 20, 3, padding=1)
            self.dw = nn.Conv2d(20, 20, 3, padding=1, groups=20)
            self.c2 = nn.Conv2d(20, 20, 3, padding=1)
            self.bn = nn.BatchNorm2d(20)
            self.c3 = nn.Conv2d(20, 40, 1, stride=2)
            self.c4 = nn.Conv2d(40, 40, 3, padding=2, dilation=2)
            self.c5 = nn.Conv2d(40, 24, 3, padding=1)
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.5, 2)

        def forward(self, x_nhwc):
            x = x_nhwc.permute(0, 3, 1, 2)
            y = F.leaky_relu(self.dw(F.relu(self.c1(x))), 0.1)
            z = F.relu(self.c2(y) + y)
            b = torch.clamp(self.bn(z), 0, 6)
            m = F.max_pool2d(b, 3, stride=2, padding=1, ceil_mode=True)
            c = F.relu(self.c4(torch.sigmoid(self.c3(b))))
            u = F.interpolate(c, scale_factor=2, mode="bilinear", align_corners=False)
            u = u + F.interpolate(c, scale_factor=2, mode="nearest")
            o = self.c5(u)
            return o.permute(0, 2, 3, 1), m, F.adaptive_max_pool2d(c, 1)

    class InceptionGru(nn.Module):
        """NHWC features of 32 channels (ReorderInput with channels_last), two branches joined
        by a channel Concat, a squeeze-excite Mul, then a GRU over the width."""

        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(32, 32, 3, padding=1)
            self.a = nn.Conv2d(32, 16, 1)
            self.b = nn.Conv2d(32, 16, 3, padding=1)
            self.se1 = nn.Conv2d(32, 16, 1)
            self.se2 = nn.Conv2d(16, 32, 1)
            self.gru = nn.GRU(32 * 3, 24, batch_first=True)

        def forward(self, x_nhwc):
            x = torch.tanh(self.stem(x_nhwc.permute(0, 3, 1, 2)))
            y = torch.cat([F.relu(self.a(x)), F.relu(self.b(x))], 1)
            s = torch.sigmoid(self.se2(F.relu(self.se1(F.adaptive_avg_pool2d(y, 1)))))
            y = F.max_pool2d(y * s, (2, 1))
            n, c, h, w = y.shape
            o, h_n = self.gru(y.permute(0, 3, 1, 2).reshape(n, w, c * h))
            return o, h_n

    torch.manual_seed(20261129)
    # name, model, input name, export shape, dynamic axes, the shapes of the test sets
    return [
        ("crnn_ocr", CrnnOcr(), "x", (2, 1, 16, 40), {0: "b", 3: "w"},
         [(2, 1, 16, 40), (3, 1, 16, 28)]),
        ("padded_nhwc", PaddedNhwc(), "x", (2, 12, 16, 3), {0: "b"}, [(2, 12, 16, 3),
                                                                     (1, 12, 16, 3)]),
        ("inception_gru", InceptionGru(), "x", (2, 6, 20, 32), {0: "b", 2: "w"},
         [(2, 6, 20, 32), (1, 6, 9, 32)]),
    ]


def nchwc_ops(model):
    return sorted({n.op_type for n in model.graph.node if n.domain == "com.microsoft.nchwc"})


def main():
    import torch
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "..", "tests", "data", "nchwc"))
    args = ap.parse_args()
    env = dict(os.environ)
    env.setdefault("NODE_PATH", os.path.expanduser("~/.cache/recur-bench/ort/node_modules"))
    rng = np.random.default_rng(29)
    for name, model, inp, shape, dyn, sets in models():
        model.eval()
        case_dir = os.path.join(args.out, name)
        shutil.rmtree(case_dir, ignore_errors=True)
        os.makedirs(case_dir)
        with tempfile.TemporaryDirectory() as tmp:
            exported = os.path.join(tmp, "exported.onnx")
            torch.onnx.export(model, torch.randn(*shape), exported, opset_version=13,
                              input_names=[inp], dynamic_axes={inp: dyn})
            subprocess.run(["node", os.path.join(HERE, "ort_optimize.js"), exported,
                            os.path.join(case_dir, "model.onnx"), "all"],
                           check=True, env=env, stderr=subprocess.DEVNULL)
        saved = onnx.load(os.path.join(case_dir, "model.onnx"))
        ops = nchwc_ops(saved)
        assert ops, name + ": ONNX Runtime wrote no NCHWc node (a CPU without AVX2?)"
        outputs = [o.name for o in saved.graph.output]
        for k, s in enumerate(sets):
            x = rng.standard_normal(s).astype(np.float32)
            with torch.inference_mode():
                ys = model(torch.from_numpy(x))
            ys = [y.numpy() for y in (ys if isinstance(ys, tuple) else (ys,))]
            ort = ort_outputs([(case_dir, [(inp, x)])])[0]
            for o, y in zip(outputs, ys):
                err = float(np.abs(ort[o] - y).max())
                assert err < 1e-4, "%s set %d: ONNX Runtime and PyTorch differ by %g on %s" % (
                    name, k, err, o)
            d = os.path.join(case_dir, "test_data_set_%d" % k)
            os.makedirs(d)
            with open(os.path.join(d, "input_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(x, inp).SerializeToString())
            for j, (o, y) in enumerate(zip(outputs, ys)):
                with open(os.path.join(d, "output_%d.pb" % j), "wb") as f:
                    f.write(numpy_helper.from_array(y, o).SerializeToString())
        print(name, "NCHWc:", ", ".join(ops))


if __name__ == "__main__":
    main()
