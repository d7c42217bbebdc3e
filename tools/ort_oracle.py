"""Expected outputs from ONNX Runtime (CPU) through onnxruntime-node, for the test generators
whose oracle is ONNX Runtime itself (tools/gen_int8_tests.py, tools/gen_contrib_tests.py):
the outputs never come from recur.

Needs node and onnxruntime-node in ~/.cache/recur-bench/ort/node_modules (tools/recur-bench
installs it) or NODE_PATH.
"""

import json
import os
import shutil
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# onnxruntime-node's type names for the numpy dtypes the generators feed and read.
_NUMPY = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
          "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
          "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
          "bool": np.bool_}


def ort_outputs(tests):
    """Runs [(case_dir, feeds)] (feeds: [(input name, array)]) through
    tools/bench/ort_conformance.js, each case's model.onnx with its feeds; returns one
    {output name: array} per case. Exits naming the case where ONNX Runtime fails."""
    tmp = tempfile.mkdtemp()
    manifest = {"tests": []}
    for i, (case_dir, feeds) in enumerate(tests):
        inputs = []
        for k, (name, a) in enumerate(feeds):
            f = os.path.join(tmp, "%d_in_%d.bin" % (i, k))
            a.tofile(f)
            inputs.append({"name": name, "type": str(a.dtype), "shape": list(a.shape),
                           "file": f})
        manifest["tests"].append({
            "model": os.path.join(case_dir, "model.onnx"),
            "result": os.path.join(tmp, "%d.json" % i),
            "sets": [{"inputs": inputs, "out_prefix": os.path.join(tmp, "%d_out" % i)}]})
    with open(os.path.join(tmp, "manifest.json"), "w") as fh:
        json.dump(manifest, fh)
    env = dict(os.environ)
    env.setdefault("NODE_PATH", os.path.expanduser("~/.cache/recur-bench/ort/node_modules"))
    subprocess.run(["node", os.path.join(HERE, "bench", "ort_conformance.js"),
                    os.path.join(tmp, "manifest.json")], check=True, env=env)
    results = []
    for t in manifest["tests"]:
        with open(t["result"]) as fh:
            r = json.load(fh)
        if "load_error" in r or "error" in r["sets"][0]:
            shutil.rmtree(tmp)
            raise SystemExit("ONNX Runtime failed on %s: %s" % (t["model"], r))
        outs = {}
        for o in r["sets"][0]["outputs"]:
            outs[o["name"]] = np.fromfile(o["file"], _NUMPY[o["type"]]).reshape(o["shape"])
        results.append(outs)
    shutil.rmtree(tmp)
    return results
