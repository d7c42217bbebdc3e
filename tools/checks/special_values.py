#!/usr/bin/env python3
"""NaN, infinities, signed zeros and subnormals through the oneDNN kernels: single nodes (the
activations, Softmax and LogSoftmax on each axis, the normalizations, the reductions, the
pools, convolutions, products, the binary operators, Resize, Transpose, Einsum, CumSum, ArgMax)
and the chains the optimizer fuses (MatMul+Add+Relu, Conv+BatchNormalization+Relu, a blocked
chain with a pool, Swish, HardSwish, Gelu, a decomposed LayerNormalization, attention, the
RNNs), each run on `onednn,reference` against the reference provider with the graph unfused.
A case fails where a NaN or an infinity lands elsewhere, or a finite value differs by more
than 1% (relative, 0.01 absolute near 0).

    PYTHONPATH=build/python tools/checks/special_values.py [--trials 3]

Values near float32's limit (1e38) are left out: float32 sums overflow there where the
reference's double does not, which docs/semantics.md ("NaN and infinities on the oneDNN
provider") keeps by design. Exit status 1 where a case fails. CTest runs it
(`tools/special-values`).
"""
import argparse
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import recur

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--trials", type=int, default=3, help="random inputs per case")
args = ap.parse_args()

rng = np.random.default_rng(0)
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 88.8, -88.8, 89.5,
                    -104.0, 1.0, -1.0, 5.0, -5.0], np.float32)
vi = helper.make_tensor_value_info
mk = helper.make_node


def salted(shape, frac):
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    idx = rng.choice(flat.size, max(1, int(flat.size * frac)), replace=False)
    flat[idx] = rng.choice(SPECIAL, idx.size)
    return x


def const(name, value):
    return numpy_helper.from_array(np.asarray(value, np.float32), name)


def weights(name, shape, scale=0.1):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def mismatch(got, want):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    if got.shape != want.shape:
        return "shape %s, reference %s" % (got.shape, want.shape)
    if not np.array_equal(np.isnan(got), np.isnan(want)):
        at = tuple(np.argwhere(np.isnan(got) != np.isnan(want))[0])
        return "NaN at %s: %g, reference %g" % (at, got[at], want[at])
    if not (np.array_equal(np.isposinf(got), np.isposinf(want))
            and np.array_equal(np.isneginf(got), np.isneginf(want))):
        at = tuple(np.argwhere(np.isinf(got) != np.isinf(want))[0])
        return "infinity at %s: %g, reference %g" % (at, got[at], want[at])
    finite = np.isfinite(got)
    if finite.any():
        err = np.abs(got[finite] - want[finite]) / (np.abs(want[finite]) + 1.0)
        if err.max() > 1e-2:
            i = int(err.argmax())
            return "%g, reference %g" % (got[finite][i], want[finite][i])
    return None


failures = []
count = 0


def check(name, nodes, inputs, inits=(), opset=17, outputs=("y",), frac=0.05):
    global count
    count += 1
    graph = helper.make_graph(nodes, "g", [vi(k, TensorProto.FLOAT, list(v))
                                           for k, v in inputs.items()],
                              [vi(o, TensorProto.FLOAT, None) for o in outputs], list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    data = model.SerializeToString()
    tested = recur.InferenceSession(data, providers=["onednn", "reference"])
    so = recur.SessionOptions()
    so.enable_graph_optimizations = False
    oracle = recur.InferenceSession(data, so, providers=["reference"])
    for _ in range(args.trials):
        feeds = {k: salted(v, frac) for k, v in inputs.items()}
        for out, got, want in zip(outputs, tested.run(None, feeds), oracle.run(None, feeds)):
            why = mismatch(got, want)
            if why:
                failures.append("%s, output %s: %s" % (name, out, why))
                return


S = (4, 37, 33)
X4 = (2, 16, 20, 24)
for op in ["Sigmoid", "Tanh", "Relu", "Exp", "Log", "Sqrt", "Reciprocal", "Abs", "Neg", "Erf",
           "Sin", "Cos", "Softplus", "Softsign", "Floor", "Ceil", "Round", "Sign", "HardSwish",
           "Mish"]:
    check(op, [mk(op, ["x"], ["y"])], {"x": S}, opset=18, frac=0.33)
for op, attrs in [("LeakyRelu", {"alpha": 0.1}), ("Elu", {}), ("Selu", {}), ("HardSigmoid", {}),
                  ("ThresholdedRelu", {}), ("Celu", {}), ("Gelu", {"approximate": "tanh"}),
                  ("Gelu", {})]:
    check(op + str(attrs), [mk(op, ["x"], ["y"], **attrs)], {"x": S}, opset=20, frac=0.33)
check("Clip", [mk("Clip", ["x", "lo", "hi"], ["y"])], {"x": S},
      [const("lo", -1.0), const("hi", 2.0)], frac=0.33)
for axis in [-1, 1, 0]:
    check("Softmax %d" % axis, [mk("Softmax", ["x"], ["y"], axis=axis)], {"x": S})
    check("LogSoftmax %d" % axis, [mk("LogSoftmax", ["x"], ["y"], axis=axis)], {"x": S})
check("LayerNormalization", [mk("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)],
      {"x": S}, [weights("g", (33,), 1.0), weights("b", (33,))])
for op in ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceLogSumExp", "ReduceL2",
           "ReduceSumSquare", "ReduceProd", "ReduceL1", "ReduceLogSum"]:
    for axes in [[1], [2]]:
        check("%s %s" % (op, axes), [mk(op, ["x", "a"], ["y"])], {"x": S},
              [numpy_helper.from_array(np.array(axes, np.int64), "a")], opset=18)
check("MaxPool", [mk("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])], {"x": X4})
check("MaxPool dilated", [mk("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], dilations=[2, 2])],
      {"x": X4})
check("AveragePool", [mk("AveragePool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
      {"x": X4})
check("GlobalAveragePool", [mk("GlobalAveragePool", ["x"], ["y"])], {"x": X4})
check("GlobalMaxPool", [mk("GlobalMaxPool", ["x"], ["y"])], {"x": X4})
check("BatchNormalization", [mk("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
      {"x": X4}, [const(n, np.ones(16)) for n in "sbmv"])
check("InstanceNormalization", [mk("InstanceNormalization", ["x", "s", "b"], ["y"])], {"x": X4},
      [const(n, np.ones(16)) for n in "sb"])
check("Conv 3x3", [mk("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])], {"x": (2, 32, 12, 12)},
      [weights("w", (32, 32, 3, 3))])
check("Conv 1x1", [mk("Conv", ["x", "w"], ["y"])], {"x": (2, 32, 12, 12)},
      [weights("w", (16, 32, 1, 1))])
check("Conv depthwise", [mk("Conv", ["x", "w"], ["y"], group=32, pads=[1, 1, 1, 1])],
      {"x": (1, 32, 12, 40)}, [weights("w", (32, 1, 3, 3))])
check("MatMul", [mk("MatMul", ["x", "w"], ["y"])], {"x": (8, 64)}, [weights("w", (64, 48))])
check("MatMul large", [mk("MatMul", ["x", "w"], ["y"])], {"x": (64, 256)},
      [weights("w", (256, 512))])
check("Gemm", [mk("Gemm", ["x", "w", "c"], ["y"], transB=1)], {"x": (8, 64)},
      [weights("w", (48, 64)), const("c", np.ones(48))])
for op in ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min"]:
    check(op, [mk(op, ["x", "z"], ["y"])], {"x": S, "z": S}, frac=0.33)
    check(op + " broadcast", [mk(op, ["x", "z"], ["y"])], {"x": S, "z": (1, 1, 33)}, frac=0.33)
for mode in ["linear", "nearest"]:
    check("Resize " + mode, [mk("Resize", ["x", "", "s"], ["y"], mode=mode)], {"x": X4},
          [const("s", [1, 1, 2, 2])])
check("Transpose", [mk("Transpose", ["x"], ["y"], perm=[0, 2, 3, 1])], {"x": X4})
check("Einsum", [mk("Einsum", ["x", "z"], ["y"], equation="bij,bjk->bik")],
      {"x": (4, 8, 16), "z": (4, 16, 8)}, opset=12)
check("CumSum", [mk("CumSum", ["x", "a"], ["y"])], {"x": S},
      [numpy_helper.from_array(np.array(1, np.int64), "a")])
check("ArgMax", [mk("ArgMax", ["x"], ["y"], axis=1)], {"x": S})

# What the optimizer fuses, against the same graph unfused on the reference.
relu_after = [mk("MatMul", ["x", "w"], ["a"]), mk("Add", ["a", "b"], ["c"]),
              mk("Relu", ["c"], ["y"])]
for xs, ws in [((16, 64), (64, 32)), ((64, 1024), (1024, 512)), ((4096, 128), (128, 64))]:
    check("MatMul+Add+Relu %s" % (xs,), relu_after, {"x": xs},
          [weights("w", ws), weights("b", ws[1:])])
check("Gemm+Sigmoid", [mk("Gemm", ["x", "w", "b"], ["a"], transB=1), mk("Sigmoid", ["a"], ["y"])],
      {"x": (16, 64)}, [weights("w", (32, 64)), weights("b", (32,))])
check("Swish", [mk("Sigmoid", ["x"], ["s"]), mk("Mul", ["x", "s"], ["y"])], {"x": (16, 64)})
check("HardSwish", [mk("HardSigmoid", ["x"], ["s"], alpha=1 / 6, beta=0.5),
                    mk("Mul", ["x", "s"], ["y"])], {"x": (16, 64)})
check("Gelu by Erf", [mk("Div", ["x", "r2"], ["a"]), mk("Erf", ["a"], ["e"]),
                      mk("Add", ["e", "one"], ["b"]), mk("Mul", ["x", "b"], ["c"]),
                      mk("Mul", ["c", "half"], ["y"])], {"x": (16, 64)},
      [const("r2", np.sqrt(2)), const("one", 1.0), const("half", 0.5)])
check("LayerNormalization decomposed",
      [mk("ReduceMean", ["x"], ["m"], axes=[-1]), mk("Sub", ["x", "m"], ["d"]),
       mk("Pow", ["d", "two"], ["p"]), mk("ReduceMean", ["p"], ["v"], axes=[-1]),
       mk("Add", ["v", "eps"], ["ve"]), mk("Sqrt", ["ve"], ["sd"]), mk("Div", ["d", "sd"], ["n"]),
       mk("Mul", ["n", "g"], ["ng"]), mk("Add", ["ng", "bb"], ["y"])], {"x": (16, 64)},
      [const("two", 2.0), const("eps", 1e-5), weights("g", (64,)), weights("bb", (64,))])
for act, extra in [("Relu", {}), ("Sigmoid", {}), ("LeakyRelu", {"alpha": 0.2})]:
    check("Conv+" + act, [mk("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]),
                          mk(act, ["a"], ["y"], **extra)], {"x": (2, 32, 10, 12)},
          [weights("w", (32, 32, 3, 3))])
check("Conv+BatchNormalization+Relu",
      [mk("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]),
       mk("BatchNormalization", ["a", "s", "bb", "mm", "vv"], ["b"]), mk("Relu", ["b"], ["y"])],
      {"x": (2, 32, 10, 12)}, [weights("w", (32, 32, 3, 3)), weights("s", (32,), 1.0),
                               weights("bb", (32,)), weights("mm", (32,)),
                               const("vv", np.ones(32))])
check("Conv chain with a pool",
      [mk("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]), mk("Relu", ["a"], ["b"]),
       mk("MaxPool", ["b"], ["c"], kernel_shape=[2, 2], strides=[2, 2]),
       mk("Conv", ["c", "w2"], ["d"], pads=[1, 1, 1, 1]), mk("Relu", ["d"], ["y"])],
      {"x": (2, 32, 16, 16)}, [weights("w", (32, 32, 3, 3)), weights("w2", (64, 32, 3, 3))])
check("Conv 1-D+Relu", [mk("Conv", ["x", "w"], ["a"], pads=[1, 1]), mk("Relu", ["a"], ["y"])],
      {"x": (2, 64, 50)}, [weights("w", (64, 64, 3))])
check("attention", [mk("MatMul", ["q", "kt"], ["s"]), mk("Div", ["s", "sc"], ["d"]),
                    mk("Softmax", ["d"], ["p"], axis=-1), mk("MatMul", ["p", "v"], ["y"])],
      {"q": (2, 4, 10, 16), "kt": (2, 4, 16, 10), "v": (2, 4, 10, 16)}, [const("sc", 4.0)])
check("LSTM after MatMul", [mk("MatMul", ["x", "w"], ["a"]),
                            mk("LSTM", ["a", "W", "R", "B"], ["y"], hidden_size=16)],
      {"x": (10, 2, 24)}, [weights("w", (24, 8)), weights("W", (1, 64, 8)),
                           weights("R", (1, 64, 16)), weights("B", (1, 128))], opset=14)
check("GRU bidirectional", [mk("GRU", ["x", "W", "R", "B"], ["y"], hidden_size=16,
                               direction="bidirectional", linear_before_reset=1)],
      {"x": (10, 2, 8)}, [weights("W", (2, 48, 8)), weights("R", (2, 48, 16)),
                          weights("B", (2, 96))], opset=14)
for act in ["Relu", "Tanh"]:
    check("RNN " + act, [mk("RNN", ["x", "W", "R", "B"], ["y"], hidden_size=16,
                            activations=[act])],
          {"x": (10, 2, 8)}, [weights("W", (1, 16, 8)), weights("R", (1, 16, 16)),
                              weights("B", (1, 32))], opset=14)

for f in failures:
    print("FAIL " + f)
print("%d of %d cases agree with the reference" % (count - len(failures), count))
sys.exit(1 if failures else 0)
