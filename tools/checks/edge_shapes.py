#!/usr/bin/env python3
"""Edge shapes on the oneDNN kernels: a dimension of 0 in every position of MatMul, Gemm, Conv,
the pools, ConvTranspose, the normalizations, the elementwise operators, the reductions, Einsum,
Resize, TopK and the RNNs (both layouts), each model run by recur-run on `onednn,reference` and on
`reference` alone. A case fails where the two end differently (exit status, output shape or
values), or on a crash or a sanitizer report: run it with a -DRECUR_SANITIZE=ON build's recur-run,
whose allocator fills new memory with 0xbe, so that an output left unwritten shows.

    tools/checks/edge_shapes.py [--recur-run build-asan/tools/recur-run] [--work DIR]

Exit status 1 where a case fails. CTest runs it with the build's own recur-run
(`tools/edge-shapes`), which shows every disagreement but not memory left unwritten.
docs/fuzzing.md ("The runs of 2026-11-30") has what it found.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--recur-run", default=os.path.join(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
    "build-asan", "tools", "recur-run"))
ap.add_argument("--work", default=None, help="where the models go (default: a temporary folder)")
args = ap.parse_args()
RUN = args.recur_run
WORK = args.work or tempfile.mkdtemp(prefix="recur-edge-")
r = np.random.default_rng(0)


def rnd(shape):
    return r.standard_normal(shape).astype(np.float32)


cases = []


def case(name, op, inputs, attrs={}, opset=17, nout=1, domain=""):
    """inputs: (name, array, constant?) each."""
    cases.append((name, op, inputs, attrs, opset, nout, domain))


for (M,K,N) in [(0,4,3),(2,0,3),(2,4,0),(0,0,0)]:
    case(f'matmul_const_{M}_{K}_{N}', 'MatMul', [('A',rnd((M,K)),False),('B',rnd((K,N)),True)])
    case(f'matmul_dyn_{M}_{K}_{N}', 'MatMul', [('A',rnd((M,K)),False),('B',rnd((K,N)),False)])
    case(f'matmul3d_const_{M}_{K}_{N}', 'MatMul', [('A',rnd((2,M,K)),False),('B',rnd((K,N)),True)])
    case(f'gemm_const_{M}_{K}_{N}', 'Gemm', [('A',rnd((M,K)),False),('B',rnd((N,K)),True),('C',rnd((N,)),True)], {'transB':1,'alpha':0.5,'beta':2.0})
    case(f'gemm_dyn_{M}_{K}_{N}', 'Gemm', [('A',rnd((K,M)),False),('B',rnd((K,N)),False),('C',rnd((M,N)),False)], {'transA':1})
for shp in [(0,3,8,8),(1,3,0,8),(2,4,5,0)]:
    case(f'conv_{shp}', 'Conv', [('X',rnd(shp),False),('W',rnd((16,shp[1],3,3)),True),('B',rnd((16,)),True)], {'pads':[1,1,1,1]})
    case(f'maxpool_{shp}', 'MaxPool', [('X',rnd(shp),False)], {'kernel_shape':[2,2],'pads':[1,1,1,1]})
    case(f'avgpool_{shp}', 'AveragePool', [('X',rnd(shp),False)], {'kernel_shape':[2,2]})
    case(f'bn_{shp}', 'BatchNormalization', [('X',rnd(shp),False),('s',rnd((shp[1],)),True),('b',rnd((shp[1],)),True),('m',rnd((shp[1],)),True),('v',np.abs(rnd((shp[1],)))+1,True)])
    case(f'convT_{shp}', 'ConvTranspose', [('X',rnd(shp),False),('W',rnd((shp[1],8,3,3)),True)], {'strides':[2,2]})
    case(f'gap_{shp}', 'GlobalAveragePool', [('X',rnd(shp),False)])
    case(f'resize_{shp}', 'Resize', [('X',rnd(shp),False),('roi',np.zeros(0,np.float32),True),('scales',np.array([1,1,2,2],np.float32),True)], {'mode':'linear'})
for shp in [(0,5),(3,0),(0,0),(2,0,4)]:
    for op in ['Relu','Sigmoid','Tanh','Exp','Abs','Sqrt','Softmax','LogSoftmax','Neg','Erf','Gelu' ]:
        if op=='Gelu': case(f'{op}_{shp}', op, [('X',rnd(shp),False)], opset=20); continue
        case(f'{op}_{shp}', op, [('X',rnd(shp),False)])
    case(f'ln_{shp}', 'LayerNormalization', [('X',rnd(shp),False),('g',rnd(shp[-1:]),True),('b',rnd(shp[-1:]),True)])
    case(f'add_{shp}', 'Add', [('X',rnd(shp),False),('Y',rnd(shp[-1:]),False)])
    case(f'mul_{shp}', 'Mul', [('X',rnd(shp),False),('Y',rnd((1,)*len(shp)),False)])
    case(f'transpose_{shp}', 'Transpose', [('X',rnd(shp),False)])
    case(f'reducemean_{shp}', 'ReduceMean', [('X',rnd(shp),False),('ax',np.array([-1],np.int64),True)], opset=18)
    case(f'reducesum_{shp}', 'ReduceSum', [('X',rnd(shp),False),('ax',np.array([0],np.int64),True)])
    case(f'argmax_{shp}', 'ArgMax', [('X',rnd(shp),False)], {'axis':0})
    case(f'concat_{shp}', 'Concat', [('X',rnd(shp),False),('Y',rnd(shp),False)], {'axis':-1})
    case(f'split_{shp}', 'Split', [('X',rnd(shp),False)], {'axis':0, 'num_outputs':1}, opset=18)
    case(f'where_{shp}', 'Where', [('C',r.random(shp)>0.5,False),('X',rnd(shp),False),('Y',rnd(shp),False)])
    case(f'cumsum_{shp}', 'CumSum', [('X',rnd(shp),False),('ax',np.array(0,np.int64),True)])
for op, G in [('LSTM',4),('GRU',3),('RNN',1)]:
    for (T,N) in [(0,2),(3,0),(0,0)]:
        for d in ['forward','bidirectional']:
            D = 2 if d=='bidirectional' else 1; H=5; I=4
            ins=[('X',rnd((T,N,I)),False),('W',rnd((D,G*H,I)),True),('R',rnd((D,G*H,H)),True),('B',rnd((D,2*G*H)),True)]
            case(f'{op}_{T}_{N}_{d}', op, ins, {'hidden_size':H,'direction':d}, nout=2)
            case(f'{op}_L1_{T}_{N}_{d}', op, [('X',rnd((N,T,I)),False)]+ins[1:], {'hidden_size':H,'direction':d,'layout':1}, nout=2, opset=14)
# more edge shapes: conv with 0 output channels / group conv / 1-D conv / depthwise, pools 1-D, ConvTranspose N=0, LSTM with initial states & seq lens with zeros
case('conv_oc0', 'Conv', [('X',rnd((1,4,6,6)),False),('W',rnd((0,4,3,3)),True)])
case('conv1d_T0', 'Conv', [('X',rnd((1,8,0)),False),('W',rnd((16,8,3)),True)], {'pads':[1,1]})
case('conv1d_dw_T0', 'Conv', [('X',rnd((2,8,0)),False),('W',rnd((8,1,5)),True)], {'pads':[2,2],'group':8})
case('conv1d_dw_N0', 'Conv', [('X',rnd((0,8,7)),False),('W',rnd((8,1,5)),True)], {'pads':[2,2],'group':8})
case('conv_dw2d_H0', 'Conv', [('X',rnd((1,8,0,9)),False),('W',rnd((8,1,3,3)),True)], {'pads':[1,1,1,1],'group':8})
case('conv_group_N0', 'Conv', [('X',rnd((0,8,5,5)),False),('W',rnd((8,4,3,3)),True)], {'group':2})
case('conv_dyn_w', 'Conv', [('X',rnd((1,4,5,5)),False),('W',rnd((0,4,3,3)),False)])
case('maxpool1d_T0', 'MaxPool', [('X',rnd((1,3,0)),False)], {'kernel_shape':[2],'pads':[1,1]})
case('avgpool1d_N0', 'AveragePool', [('X',rnd((0,3,8)),False)], {'kernel_shape':[2]})
case('gmp_1d_0', 'GlobalMaxPool', [('X',rnd((2,3,0)),False)])
case('gap_1d_0', 'GlobalAveragePool', [('X',rnd((2,3,0)),False)])
case('lrn_N0', 'LRN', [('X',rnd((0,3,4,4)),False)], {'size':3})
case('inorm_H0', 'InstanceNormalization', [('X',rnd((1,3,0,4)),False),('s',rnd((3,)),True),('b',rnd((3,)),True)])
case('softmax_ax0', 'Softmax', [('X',rnd((0,4)),False)], {'axis':0})
case('ln_axis0', 'LayerNormalization', [('X',rnd((2,0,4)),False),('g',rnd((0,4)),True),('b',rnd((0,4)),True)], {'axis':1})
case('topk0', 'TopK', [('X',rnd((3,5)),False),('k',np.array([0],np.int64),True)], nout=2)
case('topk_rows0', 'TopK', [('X',rnd((0,5)),False),('k',np.array([2],np.int64),True)], nout=2)
case('einsum_0', 'Einsum', [('A',rnd((2,0)),False),('B',rnd((0,3)),False)], {'equation':'ij,jk->ik'}, opset=12)
case('einsum_b0', 'Einsum', [('A',rnd((0,2,4)),False),('B',rnd((0,4,3)),False)], {'equation':'bij,bjk->bik'}, opset=12)
case('resize_nearest_0', 'Resize', [('X',rnd((1,2,0,3)),False),('roi',np.zeros(0,np.float32),True),('scales',np.array([1,1,2,2],np.float32),True)], {'mode':'nearest'})
case('resize_sizes_0', 'Resize', [('X',rnd((1,2,3,3)),False),('roi',np.zeros(0,np.float32),True),('scales',np.zeros(0,np.float32),True),('sizes',np.array([1,2,0,4],np.int64),True)], {'mode':'linear'})
case('pad0', 'Pad', [('X',rnd((0,3)),False),('p',np.array([1,1,0,0],np.int64),True)])
case('gather0', 'Gather', [('X',rnd((4,3)),False),('i',np.zeros((0,),np.int64),True)])
case('reduce_empty_keep', 'ReduceMax', [('X',rnd((3,0)),False)], {'axes':[1]}, opset=13)
case('reducel2_0', 'ReduceL2', [('X',rnd((0,3)),False)], {'axes':[0],'keepdims':0}, opset=13)
case('matmul_batch0_dynB', 'MatMul', [('A',rnd((0,2,4)),False),('B',rnd((0,4,3)),False)])
case('matmul_bcast0', 'MatMul', [('A',rnd((3,0,2,4)),False),('B',rnd((4,3)),True)])
case('matmul_vec_k0', 'MatMul', [('A',rnd((0,)),False),('B',rnd((0,3)),True)])
case('matmul_vec_k0_dyn', 'MatMul', [('A',rnd((0,)),False),('B',rnd((0,3)),False)])
case('gemm_c_scalar_M0', 'Gemm', [('A',rnd((0,4)),False),('B',rnd((4,3)),True),('C',rnd((1,)),True)])
case('gemm_big_k0', 'Gemm', [('A',rnd((700,0)),False),('B',rnd((0,600)),True),('C',rnd((600,)),True)])
case('matmul_big_k0', 'MatMul', [('A',rnd((700,0)),False),('B',rnd((0,600)),True)])
case('gemm_bigB_M0', 'Gemm', [('A',rnd((0,600)),False),('B',rnd((600,700)),True)])
case('matmul_bigB_M0', 'MatMul', [('A',rnd((0,600)),False),('B',rnd((600,700)),True)])
for op, G in [('LSTM',4),('GRU',3)]:
    H=5; I=4
    case(f'{op}_seqlens0', op, [('X',rnd((3,2,I)),False),('W',rnd((1,G*H,I)),True),('R',rnd((1,G*H,H)),True),('B',rnd((1,2*G*H)),True),('sl',np.array([0,2],np.int32),False)], {'hidden_size':H}, nout=2)
    case(f'{op}_h0_N0', op, [('X',rnd((3,0,I)),False),('W',rnd((1,G*H,I)),True),('R',rnd((1,G*H,H)),True),('B',rnd((1,2*G*H)),True),('sl',np.zeros((0,),np.int32),False),('h0',rnd((1,0,H)),False)], {'hidden_size':H}, nout=2)
    case(f'{op}_I0', op, [('X',rnd((3,2,0)),False),('W',rnd((1,G*H,0)),True),('R',rnd((1,G*H,H)),True)], {'hidden_size':H}, nout=2)

DTYPES = {np.dtype(bool): TensorProto.BOOL, np.dtype(np.int32): TensorProto.INT32,
          np.dtype(np.int64): TensorProto.INT64, np.dtype(np.float32): TensorProto.FLOAT}
BOTH, REF = "onednn,reference", "reference"


def write_case(d, op, inputs, attrs, opset, nout, domain):
    """The model and its input files in d; returns the outputs' names and recur-run's --input
    arguments."""
    inits, graph_inputs, feeds = [], [], []
    for n, a, const in inputs:
        if const:
            inits.append(numpy_helper.from_array(a, n))
            continue
        graph_inputs.append(helper.make_tensor_value_info(n, DTYPES[a.dtype], list(a.shape)))
        np.save(os.path.join(d, n + ".npy"), a)
        feeds += ["--input", "%s=%s" % (n, os.path.join(d, n + ".npy"))]
    outs = ["Y%d" % i for i in range(nout)]
    node = helper.make_node(op, [n for n, _, _ in inputs], outs, domain=domain, **attrs)
    g = helper.make_graph([node], "g", graph_inputs,
                          [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
                           for o in outs], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]),
              os.path.join(d, "model.onnx"))
    return outs, feeds


def difference(d, outs, feeds):
    """Why the two runs disagree, or None."""
    res = {}
    for p in (BOTH, REF):
        od = os.path.join(d, "out_" + p)
        shutil.rmtree(od, ignore_errors=True)
        pr = subprocess.run([RUN, os.path.join(d, "model.onnx"), "--providers", p,
                             "--output-dir", od] + feeds, capture_output=True, text=True)
        res[p] = (pr.returncode, pr.stdout + pr.stderr)
    for p, (rc, text) in res.items():
        if rc < 0 or rc > 2 or any(w in text for w in ("runtime error", "Sanitizer")):
            return "%s: exit %d %s" % (p, rc, text[-300:])
    if res[BOTH][0] != res[REF][0]:
        return "exit %d against the reference's %d: %s / %s" % (
            res[BOTH][0], res[REF][0], res[BOTH][1][-200:], res[REF][1][-200:])
    if res[BOTH][0] != 0:
        return None
    for o in outs:
        want = os.path.join(d, "out_" + REF, o + ".npy")
        if not os.path.exists(want):
            continue
        a, b = np.load(os.path.join(d, "out_" + BOTH, o + ".npy")), np.load(want)
        if a.shape != b.shape:
            return "%s: shape %s against %s" % (o, a.shape, b.shape)
        if a.size and not np.allclose(a, b, rtol=1e-3, atol=1e-4, equal_nan=True):
            return "%s: %s against %s" % (o, a.ravel()[:4], b.ravel()[:4])
    return None


fails = 0
for name, op, inputs, attrs, opset, nout, domain in cases:
    d = os.path.join(WORK, "".join(c if c.isalnum() or c in "_-" else "_" for c in name))
    os.makedirs(d, exist_ok=True)
    why = difference(d, *write_case(d, op, inputs, attrs, opset, nout, domain))
    if why:
        fails += 1
        print("FAIL", name, why.replace("\n", " | ")[:400])
print("%d cases, %d failing" % (len(cases), fails) + (" (models in %s)" % WORK if fails else ""))
if not fails and not args.work:
    shutil.rmtree(WORK, ignore_errors=True)
sys.exit(1 if fails else 0)
