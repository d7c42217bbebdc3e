#!/usr/bin/python3
"""recur-run --profile and --by-op (CTest tools/profile-trace): the trace of a model with a
Loop and an If, and of a shipped model, is valid Chrome trace JSON (tools/checks/check_trace.py)
with one event per node per run, body nodes counted per iteration and nested in their parent;
--perf --by-op counts the timed runs only; --plan-only --json lists subgraph nodes. Nothing
here asserts a time.

  RECUR_RUN=build/tools/recur-run /usr/bin/python3 tests/tools/profile_trace_test.py
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "checks"))

from check_trace import check_trace  # noqa: E402

RECUR_RUN = os.environ.get("RECUR_RUN", os.path.join(ROOT, "build", "tools", "recur-run"))
# The reference provider alone, unoptimised: the nodes that run are exactly the model's.
EXACT = ["--providers", "reference", "--no-optimize"]


def loop_if_model(path):
    """pre = Abs(x); v = Loop(m) {step: v + 1; keep: cond}(pre); out = If(c) {pos: Relu(v)}
    else {negate: Neg(v)}."""
    import onnx
    from onnx import TensorProto, helper
    f = TensorProto.FLOAT
    body = helper.make_graph(
        [helper.make_node("Add", ["v_in", "one"], ["v_out"], name="step"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep")],
        "body",
        [helper.make_tensor_value_info("iter", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_in", f, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v_out", f, [1])])

    def branch(name, op, node, out):
        return helper.make_graph([helper.make_node(op, ["v"], [out], name=node)], name, [],
                                 [helper.make_tensor_value_info(out, f, [1])])

    g = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["pre"], name="pre"),
         helper.make_node("Loop", ["m", "", "pre"], ["v"], name="counter", body=body),
         helper.make_node("If", ["c"], ["out"], name="choose",
                          then_branch=branch("then", "Relu", "pos", "t"),
                          else_branch=branch("else", "Neg", "negate", "e"))],
        "loop_if",
        [helper.make_tensor_value_info("x", f, [1]),
         helper.make_tensor_value_info("m", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("out", f, [1])],
        [helper.make_tensor("one", f, [1], [1.0])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def recur_run(*args):
    p = subprocess.run([RECUR_RUN] + list(args), capture_output=True, text=True, timeout=600,
                       cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


class LoopAndIf(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.model = os.path.join(d, "model.onnx")
        loop_if_model(cls.model)
        np.save(os.path.join(d, "x.npy"), np.array([-2.0], np.float32))
        np.save(os.path.join(d, "m.npy"), np.array(3, np.int64))
        np.save(os.path.join(d, "c.npy"), np.array(True))
        cls.inputs = []
        for n in ("x", "m", "c"):
            cls.inputs += ["--input", "%s=%s" % (n, os.path.join(d, n + ".npy"))]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_trace_is_valid_with_one_event_per_node_per_run(self):
        trace = os.path.join(self.tmp.name, "trace.json")
        rc, out, err = recur_run(self.model, *self.inputs, *EXACT, "--perf", "--warmup", "1",
                                 "--repeat", "2", "--profile", trace)
        self.assertEqual(rc, 0, err)
        self.assertIn("profile written to " + trace, err)
        with open(trace) as f:
            doc = json.load(f)
        # Per run: pre, counter, 3 x (step, keep), choose, pos.
        self.assertEqual(check_trace(doc, runs=3, nodes_per_run=10), [])
        nodes = [e for e in doc["traceEvents"] if e.get("cat") == "node"]
        steps = [e for e in nodes if e["name"] == "step" and e["args"]["run"] == 0]
        self.assertEqual(sorted(e["args"]["iteration"] for e in steps), [0, 1, 2])
        for e in steps:
            self.assertEqual(e["args"]["parent"], "counter")
            self.assertEqual(e["args"]["subgraph"], "body")
            self.assertEqual(e["args"]["op"], "Add")
            self.assertEqual(e["args"]["provider"], "reference")
            self.assertEqual(e["args"]["input_shapes"], [[1], [1]])
        pos = [e for e in nodes if e["name"] == "pos"]
        self.assertTrue(pos and all(e["args"]["parent"] == "choose" and
                                    e["args"]["subgraph"] == "then_branch" for e in pos))
        phases = {e["name"] for e in doc["traceEvents"] if e.get("cat") == "session"}
        self.assertEqual(phases, {"load", "optimize", "plan"})
        meta = [e for e in doc["traceEvents"] if e["ph"] == "M"]
        self.assertIn("process_name", [e["name"] for e in meta])

    def test_checker_catches_a_body_node_outside_its_parent(self):
        trace = os.path.join(self.tmp.name, "moved.json")
        rc, _, err = recur_run(self.model, *self.inputs, *EXACT, "--profile", trace)
        self.assertEqual(rc, 0, err)
        with open(trace) as f:
            doc = json.load(f)
        self.assertEqual(check_trace(doc, runs=1, nodes_per_run=10), [])
        for e in doc["traceEvents"]:
            if e.get("name") == "step":
                e["ts"] += 1e6  # a second later: outside counter and the run
                break
        problems = check_trace(doc)
        self.assertTrue(any("outside every event of its parent counter" in p for p in problems),
                        problems)

    def test_by_op_counts_the_timed_runs(self):
        rc, out, err = recur_run(self.model, *self.inputs, *EXACT, "--by-op", "--warmup", "2",
                                 "--repeat", "4")
        self.assertEqual(rc, 0, err)
        self.assertIn("time by node over 4 runs", out)
        self.assertIn("time by op type:", out)
        rows = {l.split()[0]: l.split() for l in out.splitlines() if l.strip()}
        # node, op, provider, count, ...: 4 runs x 3 iterations of the body's Add.
        self.assertEqual(rows["counter/step"][1:4], ["Add", "reference", "12"])
        self.assertEqual(rows["choose"][1:4], ["If", "reference", "4"])
        rc, out, err = recur_run(self.model, *self.inputs, *EXACT, "--by-op", "--json",
                                 "--warmup", "1", "--repeat", "3")
        self.assertEqual(rc, 0, err)
        j = json.loads(out)
        by = {n["node"]: n for n in j["by_op"]["nodes"]}
        self.assertEqual(j["by_op"]["runs"], 3)
        self.assertEqual(by["counter/keep"]["count"], 9)
        ops = {o["op"]: o for o in j["by_op"]["ops"]}
        self.assertEqual(ops["Identity"]["count"], 9)
        self.assertEqual(ops["Loop"]["count"], 3)

    def test_plan_only_json_lists_subgraph_nodes(self):
        rc, out, err = recur_run(self.model, "--plan-only", "--json", "--providers", "reference")
        self.assertEqual(rc, 0, err)
        a = {n["node"]: n for n in json.loads(out)["assignment"]}
        self.assertNotIn("subgraphs", a["pre"])
        body = a["counter"]["subgraphs"]
        self.assertEqual([s["attribute"] for s in body], ["body"])
        self.assertEqual([n["node"] for n in body[0]["nodes"]], ["step", "keep"])
        self.assertEqual(body[0]["nodes"][0]["provider"], "reference")
        self.assertEqual([(s["attribute"], [n["node"] for n in s["nodes"]])
                          for s in a["choose"]["subgraphs"]],
                         [("then_branch", ["pos"]), ("else_branch", ["negate"])])

    def test_explain_lists_subgraph_nodes(self):
        rc, out, err = recur_run(self.model, "--plan-only", "--providers", "reference")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        i = next(k for k, l in enumerate(lines) if l.startswith("counter "))
        self.assertEqual(lines[i + 1], "  body:")
        self.assertTrue(lines[i + 2].startswith("    step ") and "reference" in lines[i + 2])


class ShippedModel(unittest.TestCase):
    def test_lstm_streaming_trace(self):
        import onnx
        folder = os.path.join(ROOT, "models", "lstm_streaming")
        nodes = len(onnx.load(os.path.join(folder, "model.onnx")).graph.node)
        with tempfile.TemporaryDirectory() as d:
            trace = os.path.join(d, "t.json")
            rc, _, err = recur_run(folder, "--perf", "--warmup", "1", "--repeat", "2", *EXACT,
                                   "--profile", trace)
            self.assertEqual(rc, 0, err)
            with open(trace) as f:
                self.assertEqual(check_trace(json.load(f), runs=3, nodes_per_run=nodes), [])
            # Comparing with the folder's expected outputs: the trace holds that run.
            rc, out, err = recur_run(folder, *EXACT, "--profile", trace)
            self.assertEqual(rc, 0, err)
            self.assertIn("PASS", out)
            with open(trace) as f:
                self.assertEqual(check_trace(json.load(f), runs=1, nodes_per_run=nodes), [])
            # Every provider this build has, optimised: still a valid trace.
            rc, _, err = recur_run(folder, "--perf", "--warmup", "0", "--repeat", "2",
                                   "--profile", trace)
            self.assertEqual(rc, 0, err)
            with open(trace) as f:
                self.assertEqual(check_trace(json.load(f), runs=2), [])


class RecurBench(unittest.TestCase):
    def test_profile_is_kept_next_to_the_results(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.json")
            traces = os.path.join(d, "traces")
            cmd = [sys.executable, os.path.join(ROOT, "tools", "recur-bench"), "models/lstm_basic",
                   "--recur-run", RECUR_RUN, "--peers", "none", "--providers", "reference",
                   "--rounds", "1", "--min-runs", "1", "--warmup", "0", "--budget", "1",
                   "--progress", "never", "--json", out, "--profile", traces]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(out) as f:
                entry = json.load(f)["results"][0]
            self.assertEqual(entry["status"], "ok", entry)
            self.assertEqual(os.path.dirname(entry["profile"]), traces)
            with open(entry["profile"]) as f:
                # 1 warm-up and 3 runs of the one LSTM node.
                self.assertEqual(check_trace(json.load(f), runs=4, nodes_per_run=1), [])


if __name__ == "__main__":
    unittest.main()
