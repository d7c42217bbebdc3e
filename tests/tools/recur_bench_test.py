#!/usr/bin/python3
"""recur-bench's logic that involves no timing (CTest tools/recur-bench): the plan that
--dry-run prints (engines with availability and reasons, sweep points, skips of values a fixed
dimension cannot take), the message for a model no provider can run, input ranges learnt from
the model, crossover detection, and charts drawn from a result file. Nothing here measures time,
so nothing here can be flaky on a busy machine.

  RECUR_RUN=build/tools/recur-run /usr/bin/python3 tests/tools/recur_bench_test.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from recur_bench import stats, workload  # noqa: E402

BENCH = os.path.join(ROOT, "tools", "recur-bench")
RECUR_RUN = os.environ.get("RECUR_RUN", os.path.join(ROOT, "build", "tools", "recur-run"))


def bench(*args):
    """(exit status, stdout, stderr) of recur-bench with no peers unless asked."""
    cmd = [sys.executable, BENCH, "--recur-run", RECUR_RUN, "--progress", "never"] + list(args)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


def built_providers():
    out = subprocess.run([RECUR_RUN, "--list-providers"], capture_output=True, text=True).stdout
    return [l.split(":")[0] for l in out.splitlines() if ":" in l]


def make_model(path, nodes, inputs, opset=14):
    import onnx
    from onnx import helper
    g = helper.make_graph(nodes, "g", inputs,
                          [helper.make_tensor_value_info(nodes[-1].output[0], 1, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 7
    onnx.save(m, path)


class DryRun(unittest.TestCase):
    def test_sweep_points_and_engines(self):
        rc, out, err = bench("models/dynamic_lstm", "--sweep", "batch=1,4,0", "seq=3",
                             "--dry-run", "--peers", "none")
        self.assertEqual(rc, 0, err)
        self.assertIn("models/dynamic_lstm batch=1 seq=3: x float32[1,3,12]", out)
        self.assertIn("models/dynamic_lstm batch=4 seq=3: x float32[4,3,12]", out)
        self.assertNotIn("batch=0 seq", out)
        self.assertIn("batch=0 skipped: a dimension must be at least 1", out + err)
        self.assertIn("reference:    available", out)
        self.assertIn("    reference: runs (providers reference; nodes", out)
        for p in ("cudnn", "cuda-generic", "onednn"):
            self.assertRegex(out, r"  %s: +(available|unavailable \(.+\))" % p)

    def test_precision_axis_adds_a_row_per_reduced_precision(self):
        rc, out, err = bench("models/lstm_basic", "--precision", "fp32,bf16", "--dry-run",
                             "--peers", "none")
        self.assertEqual(rc, 0, err)
        # onednn gets a bf16 row beside its fp32 one; reference takes no precision.
        self.assertRegex(out, r"  onednn@bf16: +(available|unavailable \(.+\))")
        self.assertRegex(out, r"  onednn: +(available|unavailable \(.+\))")
        self.assertNotIn("reference@bf16", out)
        rc, _, err = bench("models/lstm_basic", "--precision", "fp16", "--dry-run")
        self.assertNotEqual(rc, 0)
        self.assertIn("unknown precision 'fp16'", err)

    def test_fixed_batch_is_skipped_with_a_message(self):
        # crnn's input is features[2,16,32]: no symbolic batch to vary.
        rc, out, err = bench("models/crnn", "--sweep", "batch=1,4", "--dry-run", "--peers",
                             "none")
        self.assertEqual(rc, 1, err)  # a message, not a crash; nothing left to plan
        self.assertIn("batch=1,4 skipped: the model has no symbolic 'batch' dimension", out + err)
        self.assertNotIn("Traceback", err)
        self.assertIn("features float32[2,16,32]", out + err)
        self.assertIn("no sweep point left to time", out + err)

    def test_symbol_names_and_unknown_keys(self):
        rc, out, err = bench("models/lstm_streaming", "--sweep", "chunk=2", "depth=3",
                             "--dry-run", "--peers", "none")
        self.assertEqual(rc, 0, err)
        self.assertIn("models/lstm_streaming chunk=2: x float32[", out)
        self.assertIn("depth=3 skipped", out + err)

    def test_bad_sweep_text(self):
        rc, _, err = bench("models/dynamic_lstm", "--sweep", "batch=1,x", "--dry-run")
        self.assertEqual(rc, 2)
        self.assertIn("'x' is not a whole number", err)
        self.assertNotIn("Traceback", err)

    def test_unavailable_peers_say_why(self):
        with tempfile.TemporaryDirectory() as tmp:
            rc, out, err = bench("models/lstm_basic", "--dry-run", "--ort-dir",
                                 os.path.join(tmp, "none"), "--no-install", "--python",
                                 os.path.join(tmp, "no-python"))
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"onnxruntime: +unavailable \((no node on PATH|onnxruntime-node "
                              r"1\.30\.0 is not installed in [^)]*none)")
        self.assertRegex(out, r"pytorch: +unavailable \(cannot run [^)]*no-python")
        self.assertIn("baseline: reference", out)

    def test_token_ids_stay_in_the_vocabulary(self):
        rc, out, err = bench("models/char_lstm_lm", "--sweep", "batch=2", "seq=5", "--dry-run",
                             "--peers", "none")
        self.assertEqual(rc, 0, err)
        self.assertIn("tokens: integers in [0, 39] (ids of an embedding with 40 rows)", out)


class BadInput(unittest.TestCase):
    def test_model_no_provider_can_run(self):
        from onnx import TensorProto, helper
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bad.onnx")
            make_model(path, [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                              helper.make_node("Frobnicate", ["r"], ["f"], name="frob"),
                              helper.make_node("Frobnicate", ["f"], ["y"], name="frob2")],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])])
            rc, out, err = bench(path, "--peers", "none", "--threads", "1")
        self.assertEqual(rc, 1, out + err)
        text = out + err
        self.assertIn("no recur provider can run this model", text)
        self.assertIn("recur-bench: nothing to time", err)
        self.assertNotIn("Traceback", text)
        # Every such node, with every provider's reason.
        for node in ("node 'frob' (Frobnicate)", "node 'frob2' (Frobnicate)"):
            self.assertIn(node, text)
        for p in built_providers():
            self.assertIn("%s: unsupported op Frobnicate" % p, text)

    def test_missing_model(self):
        rc, _, err = bench("/nonexistent/model.onnx", "--dry-run")
        self.assertEqual(rc, 2)
        self.assertIn("no model at /nonexistent/model.onnx", err)


class Logic(unittest.TestCase):
    def test_percentiles(self):
        s = stats.summarize([5.0, 1.0, 3.0, 2.0, 4.0])
        self.assertEqual(s["median"], 3.0)
        self.assertEqual(s["min"], 1.0)
        self.assertAlmostEqual(s["p90"], 4.6)
        self.assertIsNone(stats.summarize([]))

    def test_crossovers(self):
        xs = [1, 4, 16, 64]
        series = {"cpu": [1.0, 2.0, 8.0, 32.0], "gpu": [4.0, 4.0, 4.0, 8.0]}
        ch = stats.crossovers(xs, series)
        self.assertEqual([c["engine"] for c in ch], ["cpu", "gpu"])
        self.assertEqual((ch[1]["x_before"], ch[1]["x_after"]), (4, 16))
        # log-log interpolation: log(cpu/gpu) goes from log(0.5) at 4 to log(2) at 16.
        self.assertAlmostEqual(ch[1]["x_cross"], 8.0)
        self.assertEqual(stats.crossovers(xs, {"a": [None] * 4}), [])

    def test_a_tuning_probe_is_no_sample(self):
        # recur's oneDNN probe tunes in its first run: 1.5 s for a model whose runs take 30 ms.
        # That run must neither become a sample nor make the blocks skip their warm-up.
        import argparse
        from recur_bench import cli

        class Fake:
            name = "onednn"

            def __init__(self, tunes):
                self._tunes = tunes

            def tunes(self):
                return self._tunes

        class Bar:
            def update(self, label=None, advance=0):
                pass

        def fake_block(e, work, threads, warmup, repeat, timeout, series, mode=None):
            runs = [1500.0 if (mode == "tune" and e.tunes() and k == 0) else 30.0
                    for k in range(warmup + repeat)]
            return runs[warmup:]

        a = argparse.Namespace(rounds=2, warmup=2, min_runs=6, budget=60, timeout=60)
        saved = cli.run_block
        cli.run_block = fake_block
        try:
            s = cli.measure(argparse.Namespace(label="m"), [Fake(True)], 1, a, Bar())["onednn"]
        finally:
            cli.run_block = saved
        self.assertEqual((s.rounds, s.warmup, s.repeat), (2, 2, 3))
        self.assertEqual(s.samples, [30.0] * 6)

    def test_resolve_sweep(self):
        inputs = [{"name": "x", "dtype": "float32", "shape": ["N", "time", 3]},
                  {"name": "h", "dtype": "float32", "shape": [2, "N", 4]}]
        axes, skipped = workload.resolve_sweep(
            inputs, workload.parse_sweep(["batch=1,2,2", "seq=0,7", "other=1"]))
        self.assertEqual(axes, [("batch", ["N"], [1, 2]), ("seq", ["time"], [7])])
        self.assertEqual(len(skipped), 2)
        self.assertEqual(workload.sweep_points(axes), [{"batch": 1, "seq": 7},
                                                       {"batch": 2, "seq": 7}])

    def test_lengths_stay_within_the_sequence(self):
        import numpy as np
        w = workload.Work("m", os.path.join(ROOT, "models", "bilstm_seqlens", "model.onnx"),
                          point={"seq": 6, "batch": 5})
        inputs = [{"name": "X", "dtype": "float32", "shape": ["seq", "batch", 10]},
                  {"name": "sequence_lens", "dtype": "int32", "shape": ["batch"]}]
        axes, _ = workload.resolve_sweep(inputs, [("seq", [6]), ("batch", [5])])
        arrays = dict(workload.make_arrays(w, inputs, {}, axes))
        self.assertEqual(arrays["X"].shape, (6, 5, 10))
        lens = arrays["sequence_lens"]
        self.assertEqual(lens.dtype, np.int32)
        self.assertTrue((lens >= 1).all() and (lens <= 6).all())
        self.assertEqual(int(lens.max()), 6)

    def test_node_counts_take_in_subgraph_nodes(self):
        inner = [{"node": "c", "op": "Conv", "provider": "onednn", "declined": []},
                 {"node": "s", "op": "Slice", "provider": "reference", "declined": []}]
        plan = {"assignment": [
            {"node": "e", "op": "Equal", "provider": "reference", "declined": []},
            {"node": "if", "op": "If", "provider": "reference", "declined": [],
             "subgraphs": [{"attribute": "then_branch", "nodes": inner},
                           {"attribute": "else_branch", "nodes": inner[:1]}]}]}
        self.assertEqual(workload.node_counts(plan), {"reference": 3, "onednn": 2})

    def test_a_scalar_input_stays_a_scalar_in_the_feeds(self):
        import numpy as np
        with tempfile.TemporaryDirectory() as d:
            workload.write_feeds(d, [("sr", np.array(16000, np.int64)),
                                     ("x", np.zeros((1, 4), np.float32))])
            self.assertEqual(np.load(os.path.join(d, "input_0.npy")).shape, ())
            with open(os.path.join(d, "feeds.json")) as f:
                feeds = json.load(f)
            self.assertEqual([e["shape"] for e in feeds], [[], [1, 4]])


class Charts(unittest.TestCase):
    def result(self, sweep):
        machine = {"hostname": "h", "os": "Linux", "date": "2026-01-01T00:00:00+00:00",
                   "commit": "abc", "load_avg": [0, 0, 0],
                   "cpu": {"model": "CPU", "logical_cpus": 2}, "gpu": {"present": False}}
        results = []
        for eng_i, eng in enumerate(["onednn", "onnxruntime"]):
            for b in ([1, 4, 16] if sweep else [None]):
                lat = (1.0 + eng_i) * (b or 1) ** (0.5 if eng_i else 1.0)
                results.append({
                    "case": "m", "point": {"batch": b} if b else {}, "threads": 1,
                    "engine": eng, "status": "ok", "dims": {"batch": b or 1, "seq": 10},
                    "latency": {"n": 20, "median": lat, "p90": lat * 1.1, "min": lat * 0.9},
                    "load_ms": 5.0, "peak_rss_mib": 50.0, "rss_over_empty_mib": 10.0,
                    "speedup": 2.0 if eng == "onednn" else None})
        r = {"command": "recur-bench test", "machine": machine, "baseline": "onnxruntime",
             "engines": [{"name": "onednn", "family": "recur", "available": True},
                         {"name": "onnxruntime", "family": "peer", "available": True}],
             "settings": {"threads": [1], "rounds": 3, "warmup": 2, "repeat": 7,
                          "min_runs": 20}, "results": results, "empty_rss_mib": {}}
        if sweep:
            sys.path.insert(0, os.path.join(ROOT, "tools"))
            from recur_bench import cli
            cli.add_crossovers(r)
        return r

    def test_bar_and_line_charts_from_json(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("no matplotlib (tools/install-deps.sh --bench)")
        for sweep in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                res = os.path.join(tmp, "r.json")
                png = os.path.join(tmp, "r.png")
                with open(res, "w") as f:
                    json.dump(self.result(sweep), f)
                rc, out, err = bench("--from-json", res, "--plot", png)
                self.assertEqual(rc, 0, err)
                self.assertIn("vs onnxruntime", out)
                with open(png, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
                if sweep:
                    self.assertIn("onnxruntime overtakes onednn at batch=", out)


if __name__ == "__main__":
    unittest.main(verbosity=2)
