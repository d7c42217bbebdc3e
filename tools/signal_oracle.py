#!/usr/bin/python3
"""Writes single-node test folders (model.onnx + test_data_set_0) for the signal/ reference
kernels (DFT, STFT) into tests/data/signal, with expected outputs from numpy's FFT in float64.

The ONNX backend node tests transform 10 to 16 points, which recur sums directly. These cover
the lengths that go through its FFT (providers/reference/signal/dft_plan.cc): powers of two,
lengths Bluestein's method takes (a prime, 400 = a 25 ms frame at 16 kHz), inverse and one-sided
transforms, dft_length past and short of the axis, and STFT frames of speech front ends, on a
[batch, length, 1] and a [batch, length] signal.

Run with /usr/bin/python3 (numpy, onnx 1.12): /usr/bin/python3 tools/signal_oracle.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "signal")
rng = np.random.default_rng(20261128)


def write_case(name, node, inputs, outputs, constants=()):
    """inputs: graph inputs [(name, array)]; constants: initializers; outputs: [(name, array)]."""
    d = os.path.join(ROOT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))

    def vi(n, a):
        return helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype],
                                             a.shape)
    graph = helper.make_graph([node], name, [vi(n, a) for n, a in inputs],
                              [vi(n, a) for n, a in outputs],
                              [numpy_helper.from_array(a, n) for n, a in constants])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, (n, a) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())
    for k, (n, a) in enumerate(outputs):
        with open(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, n).SerializeToString())


def as_pairs(z):
    """Complex array -> float32 [..., 2]."""
    return np.stack([z.real, z.imag], axis=-1).astype(np.float32)


def dft_case(name, shape, axis, length=None, inverse=0, onesided=0, complex_in=False):
    """x [shape..., 1 or 2]; the transform along `axis` of `length` points (numpy's n=)."""
    comps = 2 if complex_in else 1
    x = rng.standard_normal(tuple(shape) + (comps,)).astype(np.float32)
    z = x[..., 0].astype(np.float64)
    if complex_in:
        z = z + 1j * x[..., 1].astype(np.float64)
    n = length if length is not None else shape[axis]
    y = np.fft.ifft(z, n=n, axis=axis) if inverse else np.fft.fft(z, n=n, axis=axis)
    if onesided:
        y = np.take(y, np.arange(n // 2 + 1), axis=axis)
    ins = ["x", "n" if length is not None else ""]
    consts = [("n", np.array(length, np.int64))] if length is not None else []
    node = helper.make_node("DFT", ins, ["y"], axis=axis, inverse=inverse, onesided=onesided)
    write_case(name, node, [("x", x)], [("y", as_pairs(y))], consts)


def stft_case(name, batch, length, frame, step, window="hann", rank2=False):
    x = rng.standard_normal((batch, length)).astype(np.float32)
    w = np.hanning(frame + 1)[:-1].astype(np.float32) if window == "hann" else None
    frames = 1 + (length - frame) // step
    xd = x.astype(np.float64)
    wd = w.astype(np.float64) if w is not None else np.ones(frame)
    idx = np.arange(frame)[None, :] + step * np.arange(frames)[:, None]
    y = np.fft.rfft(xd[:, idx] * wd, axis=-1)  # [batch, frames, bins]
    signal = x if rank2 else x[..., None]
    consts = [("step", np.array(step, np.int64))]
    if w is not None:
        consts.append(("w", w))
        ins = ["signal", "step", "w"]
    else:
        consts.append(("len", np.array(frame, np.int64)))
        ins = ["signal", "step", "", "len"]
    node = helper.make_node("STFT", ins, ["y"], onesided=1)
    write_case(name, node, [("signal", signal)], [("y", as_pairs(y))], consts)


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    dft_case("dft_pow2_64", [3, 64], axis=1)
    dft_case("dft_pow2_512_onesided", [2, 512], axis=1, onesided=1)
    dft_case("dft_bluestein_400", [2, 400], axis=1)
    dft_case("dft_bluestein_prime_101_complex", [2, 101], axis=1, complex_in=True)
    dft_case("dft_bluestein_1000_inverse_complex", [1, 1000], axis=1, inverse=1, complex_in=True)
    dft_case("dft_pow2_1024_inverse", [1, 1024], axis=1, inverse=1, complex_in=True)
    dft_case("dft_length_past_axis_300_to_512", [2, 300], axis=1, length=512)
    dft_case("dft_length_short_of_axis_600_to_480", [2, 600], axis=1, length=480)
    dft_case("dft_middle_axis_96", [2, 96, 3], axis=1, complex_in=True)
    stft_case("stft_hann_400_step_160", 2, 16000, 400, 160)
    stft_case("stft_hann_512_step_128_rank2", 1, 8000, 512, 128, rank2=True)
    stft_case("stft_no_window_frame_50", 1, 1000, 50, 25, window=None)


if __name__ == "__main__":
    main()
