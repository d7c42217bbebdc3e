"""The Python binding (python/): outputs against PyTorch's expected ones in models/*/ and
against the C++ API (recur-run's .npy outputs for the same inputs), metadata, and errors as
recur.Error with code and message.

Run by CTest as `python3 tests/python/test_recur.py` with PYTHONPATH=build/python (the
in-tree module), RECUR_RUN=recur-run and RECUR_MODELS=models/.
"""
import gc
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

import recur

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.environ.get("RECUR_MODELS", os.path.join(HERE, "..", "..", "models"))
RECUR_RUN = os.environ.get("RECUR_RUN")


def model_dirs():
    return sorted(d for d in os.listdir(MODELS)
                  if os.path.exists(os.path.join(MODELS, d, "model.onnx")))


def load_pb(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def test_set(model):
    """The feeds and expected outputs of models/<model>/test_data_set_0, by name."""
    d = os.path.join(MODELS, model, "test_data_set_0")
    feeds, expected = {}, {}
    for f in sorted(os.listdir(d)):
        name, value = load_pb(os.path.join(d, f))
        (feeds if f.startswith("input_") else expected)[name] = value
    return feeds, expected


def close(got, want):
    # The models' CTests use the same bound: |got - want| <= 1e-5 + 1e-3 |want|.
    return got.shape == want.shape and got.dtype == want.dtype and bool(
        np.all(np.abs(got.astype(np.float64) - want) <= 1e-5 + 1e-3 * np.abs(want)))


class ModelsTest(unittest.TestCase):
    def test_every_model_matches_pytorch(self):
        for model in model_dirs():
            for providers in (None, ["reference"]):
                with self.subTest(model=model, providers=providers):
                    feeds, expected = test_set(model)
                    sess = recur.InferenceSession(os.path.join(MODELS, model, "model.onnx"),
                                                  providers=providers)
                    names = [o.name for o in sess.get_outputs()]
                    self.assertEqual(sorted(names), sorted(expected))
                    got = sess.run(None, feeds)
                    self.assertEqual(len(got), len(names))
                    for name, value in zip(names, got):
                        self.assertIsInstance(value, np.ndarray)
                        self.assertTrue(close(value, expected[name]), "%s: %s" % (model, name))

    @unittest.skipUnless(RECUR_RUN, "RECUR_RUN (recur-run) not set")
    def test_same_outputs_as_the_cpp_api(self):
        # Random float inputs instead of the test sets', so that agreeing with recur-run is
        # not just both agreeing with the expected outputs. One thread on the reference
        # provider on both sides: the results must then be bit-identical.
        rng = np.random.default_rng(7)
        for model in model_dirs():
            with self.subTest(model=model):
                feeds, _ = test_set(model)
                path = os.path.join(MODELS, model, "model.onnx")
                for name, value in feeds.items():
                    if value.dtype == np.float32:
                        feeds[name] = rng.standard_normal(value.shape).astype(np.float32)
                sess = recur.InferenceSession(path, providers=["reference"], threads=1)
                got = dict(zip([o.name for o in sess.get_outputs()], sess.run(None, feeds)))
                with tempfile.TemporaryDirectory() as tmp:
                    cmd = [RECUR_RUN, path, "--providers", "reference", "--threads", "1",
                           "--output-dir", os.path.join(tmp, "out")]
                    for name, value in feeds.items():
                        np.save(os.path.join(tmp, name + ".npy"), value)
                        cmd += ["--input", "%s=%s" % (name, os.path.join(tmp, name + ".npy"))]
                    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                    for name, value in got.items():
                        want = np.load(os.path.join(tmp, "out", name + ".npy"))
                        np.testing.assert_array_equal(value, want, err_msg=model + ": " + name)


class SessionTest(unittest.TestCase):
    path = os.path.join(MODELS, "lstm_streaming", "model.onnx")

    def test_metadata_like_onnxruntime(self):
        sess = recur.InferenceSession(os.path.join(MODELS, "char_lstm_lm", "model.onnx"))
        (inp,) = sess.get_inputs()
        self.assertEqual((inp.name, inp.type, inp.shape), ("tokens", "tensor(int64)", ["batch", "seq"]))
        (out,) = sess.get_outputs()
        self.assertEqual((out.name, out.type, out.shape),
                         ("log_probs", "tensor(float)", ["batch", "seq", 40]))
        sess = recur.InferenceSession(self.path)
        self.assertEqual([i.name for i in sess.get_inputs()], ["x", "h0", "c0"])
        self.assertEqual(sess.get_inputs()[1].shape, [2, "batch", 40])
        self.assertEqual([o.name for o in sess.get_outputs()], ["y", "h_n", "c_n"])

    def test_modelmeta_like_onnxruntime(self):
        from onnx import helper
        graph = helper.make_graph(
            [helper.make_node("Identity", ["X"], ["Y"])], "main",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])], doc_string="gdoc")
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                                  producer_name="pytorch", producer_version="1.13.1",
                                  domain="org.example", model_version=4, doc_string="mdoc")
        helper.set_model_props(model, {"labels": "yes,no", "sample_rate": "16000"})
        meta = recur.InferenceSession(model.SerializeToString()).get_modelmeta()
        self.assertEqual((meta.producer_name, meta.producer_version, meta.domain, meta.version),
                         ("pytorch", "1.13.1", "org.example", 4))
        self.assertEqual((meta.description, meta.graph_name, meta.graph_description),
                         ("mdoc", "main", "gdoc"))
        self.assertEqual(meta.custom_metadata_map, {"labels": "yes,no", "sample_rate": "16000"})
        self.assertEqual(meta.opsets, {"": 14})
        self.assertEqual(meta.ir_version, model.ir_version)

    def test_inputs_backed_by_an_initializer(self):
        # Y = X + B where B is a graph input with an initializer: onnxruntime lists it apart,
        # and a run may feed it or leave the initializer's value.
        from onnx import helper
        graph = helper.make_graph(
            [helper.make_node("Add", ["X", "B"], ["Y"])], "g",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2]),
             helper.make_tensor_value_info("B", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
            [helper.make_tensor("B", TensorProto.FLOAT, [2], [10, 20])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
        sess = recur.InferenceSession(model.SerializeToString())
        self.assertEqual([i.name for i in sess.get_inputs()], ["X"])
        self.assertEqual([i.name for i in sess.get_overridable_initializers()], ["B"])
        x = np.array([1, 2], dtype=np.float32)
        np.testing.assert_array_equal(sess.run(None, {"X": x})[0], [11, 22])
        b = np.array([100, 200], dtype=np.float32)
        np.testing.assert_array_equal(sess.run(None, {"X": x, "B": b})[0], [101, 202])

    def test_named_outputs_in_the_order_asked(self):
        feeds, expected = test_set("lstm_streaming")
        sess = recur.InferenceSession(self.path)
        c_n, y = sess.run(["c_n", "y"], feeds)
        self.assertTrue(close(c_n, expected["c_n"]))
        self.assertTrue(close(y, expected["y"]))

    def test_inputs_that_are_not_contiguous_arrays(self):
        feeds, expected = test_set("lstm_streaming")
        sess = recur.InferenceSession(self.path)
        # A Fortran-ordered copy and a nested list hold the same values in other layouts.
        feeds["x"] = np.asfortranarray(feeds["x"])
        feeds["h0"] = feeds["h0"].tolist()  # becomes float64: must be refused, as below
        with self.assertRaises(recur.Error):
            sess.run(None, feeds)
        feeds["h0"] = np.array(feeds["h0"], dtype=np.float32)
        (y,) = sess.run(["y"], feeds)
        self.assertTrue(close(y, expected["y"]))

    def test_runs_from_several_threads(self):
        # run() lets go of the GIL; a session serves several Python threads at once.
        import threading
        feeds, expected = test_set("lstm_streaming")
        sess = recur.InferenceSession(self.path)
        results, errors = [], []

        def work():
            try:
                for _ in range(5):
                    results.append(sess.run(["y"], feeds)[0])
            except Exception as e:  # reported below: an exception in a thread is lost
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 20)
        for y in results:
            self.assertTrue(close(y, expected["y"]))

    def test_outputs_outlive_the_session(self):
        feeds, expected = test_set("lstm_streaming")
        sess = recur.InferenceSession(self.path)
        y = sess.run(["y"], feeds)[0]
        del sess
        gc.collect()
        self.assertTrue(close(y, expected["y"]))

    def test_outputs_never_alias_the_feeds(self):
        # Y = Identity(X) and Z = Reshape(X): both are X's memory inside recur, but the caller
        # may change or free X after the run.
        from onnx import helper
        graph = helper.make_graph(
            [helper.make_node("Identity", ["X"], ["Y"]),
             helper.make_node("Reshape", ["X", "shape"], ["Z"])], "g",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3]),
             helper.make_tensor_value_info("Z", TensorProto.FLOAT, [6])],
            [helper.make_tensor("shape", TensorProto.INT64, [1], [6])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
        sess = recur.InferenceSession(model.SerializeToString())
        x = np.arange(6, dtype=np.float32).reshape(2, 3)
        y, z = sess.run(None, {"X": x})
        self.assertFalse(np.shares_memory(y, x))
        self.assertFalse(np.shares_memory(z, x))
        x[:] = -1
        del x
        gc.collect()
        np.testing.assert_array_equal(y, np.arange(6, dtype=np.float32).reshape(2, 3))
        np.testing.assert_array_equal(z, np.arange(6, dtype=np.float32))

    def test_model_from_bytes_and_onnxruntime_provider_names(self):
        feeds, expected = test_set("lstm_streaming")
        with open(self.path, "rb") as f:
            data = f.read()
        sess = recur.InferenceSession(data, providers=["CPUExecutionProvider"])
        self.assertEqual(sess.get_providers()[-1], "reference")
        self.assertNotIn("cudnn", sess.get_providers())
        self.assertTrue(close(sess.run(["h_n"], feeds)[0], expected["h_n"]))

    def test_string_tensors_in_and_out(self):
        # StringNormalizer upper-cases; str arrays of numpy (<U) and object arrays both go in,
        # and an object array of str comes out, as with ONNX Runtime.
        node = onnx.helper.make_node("StringNormalizer", ["s"], ["t"], case_change_action="UPPER")
        graph = onnx.helper.make_graph(
            [node], "g", [onnx.helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
            [onnx.helper.make_tensor_value_info("t", TensorProto.STRING, [2])])
        model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)])
        sess = recur.InferenceSession(model.SerializeToString())
        for feed in (np.array(["abc", "é z"]), np.array(["abc", "é z"], dtype=object)):
            (out,) = sess.run(None, {"s": feed})
            self.assertEqual(out.dtype, object)
            self.assertEqual(out.tolist(), ["ABC", "É Z"])
        with self.assertRaises(recur.Error) as e:
            sess.run(None, {"s": np.array(["a", 3], dtype=object)})
        self.assertIn("element 1 is not a str", str(e.exception))

    def test_explain_and_assignment(self):
        sess = recur.InferenceSession(self.path, providers=["reference"])
        text = sess.explain()
        self.assertIn("LSTM", text)
        nodes = sess.assignment()
        lstm = [n for n in nodes if n["op"] == "LSTM"]
        self.assertTrue(lstm)
        self.assertTrue(all(n["provider"] == "reference" for n in nodes))
        self.assertEqual(set(nodes[0]), {"node", "op", "provider", "declined", "notes"})

    def test_providers_and_version(self):
        self.assertIn("reference", recur.get_available_providers())
        self.assertTrue(set(recur.get_available_providers()) <= set(recur.get_all_providers()))
        self.assertRegex(recur.__version__, r"^\d+\.\d+\.\d+$")

    def test_threads_and_settings(self):
        sess = recur.InferenceSession(self.path, providers=["reference"], threads=1,
                                      settings={})
        self.assertEqual(sess.get_providers(), ["reference"])


    def test_random_seed(self):
        # A RandomNormal node: SessionOptions.random_seed repeats its draws, None draws anew.
        from onnx import helper
        node = helper.make_node("RandomNormal", [], ["y"], shape=[16])
        graph = helper.make_graph([node], "g", [],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16])])
        data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        data = data.SerializeToString()
        opts = recur.SessionOptions()
        opts.random_seed = 5
        a = recur.InferenceSession(data, sess_options=opts).run(None, {})[0]
        b = recur.InferenceSession(data, sess_options=opts).run(None, {})[0]
        np.testing.assert_array_equal(a, b)
        fresh = recur.InferenceSession(data)
        self.assertFalse(np.array_equal(fresh.run(None, {})[0], fresh.run(None, {})[0]))
        # onnxruntime.set_seed: the seed of sessions made afterwards without one of their own.
        try:
            recur.set_seed(11)
            c = recur.InferenceSession(data).run(None, {})[0]
            d = recur.InferenceSession(data).run(None, {})[0]
            np.testing.assert_array_equal(c, d)
            self.assertFalse(np.array_equal(a, c))
            np.testing.assert_array_equal(
                recur.InferenceSession(data, sess_options=opts).run(None, {})[0], a)
        finally:
            recur._default_seed = None
        # use_deterministic_compute is recur's deterministic session, whose random operators
        # draw from seed 0 where no seed is given: the same values in every session.
        det = recur.SessionOptions()
        det.use_deterministic_compute = True
        e = recur.InferenceSession(data, sess_options=det).run(None, {})[0]
        again = recur.InferenceSession(data, sess_options=det).run(None, {})[0]
        np.testing.assert_array_equal(e, again)
        self.assertFalse(np.array_equal(e, a))
        # A seed is an int of 64 bits; a negative one as C++ converts an int64.
        neg = recur.SessionOptions()
        neg.random_seed = -1
        top = recur.SessionOptions()
        top.random_seed = 2**64 - 1
        np.testing.assert_array_equal(
            recur.InferenceSession(data, sess_options=neg).run(None, {})[0],
            recur.InferenceSession(data, sess_options=top).run(None, {})[0])
        for bad, error in ((2**64, ValueError), (3.5, TypeError), ("7", TypeError)):
            opts.random_seed = bad
            with self.assertRaises(error):
                recur.InferenceSession(data, sess_options=opts)

    def test_session_options_like_onnxruntime(self):
        feeds, expected = test_set("lstm_streaming")
        so = recur.SessionOptions()
        self.assertEqual(so.graph_optimization_level, recur.GraphOptimizationLevel.ORT_ENABLE_ALL)
        so.graph_optimization_level = recur.GraphOptimizationLevel.ORT_DISABLE_ALL
        self.assertFalse(so.enable_graph_optimizations)
        with self.assertRaises(ValueError):
            so.graph_optimization_level = 5
        so.execution_mode = recur.ExecutionMode.ORT_PARALLEL
        so.inter_op_num_threads = 2
        so.log_severity_level = 3
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.assertEqual(so.get_session_config_entry("session.intra_op.allow_spinning"), "0")
        with self.assertRaises(KeyError):
            so.get_session_config_entry("session.nothing")
        if "onednn" in recur.get_available_providers():
            sess = recur.InferenceSession(self.path, so, providers=["onednn", "reference"],
                                          settings={"onednn.verbose": "0"})
            self.assertEqual(sess.get_provider_options(),
                             {"onednn": {"verbose": "0"}, "reference": {}})
        else:
            sess = recur.InferenceSession(self.path, so, providers=["reference"])
            self.assertEqual(sess.get_provider_options(), {"reference": {}})
        self.assertIs(sess.get_session_options(), so)
        self.assertIn(recur.get_device(), ("CPU", "GPU"))
        (y, _, _) = sess.run(None, feeds)
        self.assertTrue(close(y, expected["y"]))
        self.assertEqual(sess.end_profiling(), "")  # not profiling

    def test_provider_options_like_onnxruntime(self):
        import warnings
        if "onednn" in recur.get_available_providers():
            # recur's provider names take that provider's settings, in either of onnxruntime's
            # forms.
            for kwargs in (dict(providers=[("onednn", {"verbose": False}), "reference"]),
                           dict(providers=["onednn", "reference"],
                                provider_options=[{"verbose": False}, {}])):
                sess = recur.InferenceSession(self.path, **kwargs)
                self.assertEqual(sess.get_provider_options()["onednn"], {"verbose": "0"})
            with self.assertRaisesRegex(recur.Error, "no setting 'bogus'"):
                recur.InferenceSession(self.path, providers=["onednn"],
                                       provider_options=[{"bogus": 1}])
        with self.assertRaises(ValueError):
            recur.InferenceSession(self.path, providers=["reference"], provider_options=[{}, {}])
        # onnxruntime's CUDA options: device_id is honoured where a GPU provider has its
        # device; one recur has no counterpart for is ignored with a warning.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sess = recur.InferenceSession(
                self.path, providers=[("CUDAExecutionProvider",
                                       {"device_id": 0, "gpu_mem_limit": 1 << 30}),
                                      "CPUExecutionProvider"])
        self.assertEqual([str(w.message) for w in caught],
                         ["recur ignores CUDAExecutionProvider's option 'gpu_mem_limit'"])
        if "cudnn" in recur.get_available_providers():
            self.assertEqual(sess.get_provider_options()["cudnn"], {"device": "0"})

    def test_profiling_like_onnxruntime(self):
        import json
        feeds, _ = test_set("lstm_streaming")
        with tempfile.TemporaryDirectory() as d:
            so = recur.SessionOptions()
            so.enable_profiling = True
            so.profile_file_prefix = os.path.join(d, "lstm_")
            sess = recur.InferenceSession(self.path, so)
            sess.run(None, feeds)
            path = sess.end_profiling()
            self.assertTrue(os.path.basename(path).startswith("lstm_"), path)
            self.assertTrue(path.endswith(".json"), path)
            with open(path) as f:
                trace = json.load(f)
            events = trace["traceEvents"] if isinstance(trace, dict) else trace
            self.assertIn("LSTM", " ".join(str(e.get("args", {})) for e in events))
            del sess


def load_maps(path):
    """A SequenceProto of maps as a list of dicts (how ONNX Runtime's Python API returns
    ZipMap's output)."""
    seq = onnx.SequenceProto()
    with open(path, "rb") as f:
        seq.ParseFromString(f.read())
    maps = []
    for m in seq.map_values:
        keys = [k.decode() for k in m.string_keys] if m.string_keys else list(m.keys)
        maps.append({k: float(numpy_helper.to_array(v))
                     for k, v in zip(keys, m.values.tensor_values)})
    return maps


class MapsTest(unittest.TestCase):
    """sk_dictvec_logreg takes a {name: value} dict and returns a list with one {class:
    probability} dict; the expected outputs are scikit-learn's (tests/data/ml)."""
    folder = os.path.join(HERE, "..", "data", "ml", "sk_dictvec_logreg")

    def test_dict_in_list_of_dicts_out(self):
        sess = recur.InferenceSession(os.path.join(self.folder, "model.onnx"))
        sets = sorted(d for d in os.listdir(self.folder) if d.startswith("test_data_set_"))
        self.assertGreater(len(sets), 1)
        for ds in sets:
            d = os.path.join(self.folder, ds)
            m = onnx.MapProto()
            with open(os.path.join(d, "input_0.pb"), "rb") as f:
                m.ParseFromString(f.read())
            # Plain Python floats: the binding converts them to the declared float32.
            feed = {k.decode(): float(numpy_helper.to_array(v))
                    for k, v in zip(m.string_keys, m.values.tensor_values)}
            label, proba = sess.run(None, {"features": feed})
            want_label = list(load_pb(os.path.join(d, "output_0.pb"))[1])
            want_proba = load_maps(os.path.join(d, "output_1.pb"))
            self.assertEqual(label.dtype, object)
            self.assertEqual(list(label), want_label)
            self.assertIsInstance(proba, list)
            self.assertEqual(len(proba), 1)
            self.assertEqual(set(proba[0]), set(want_proba[0]))
            for k, v in want_proba[0].items():
                self.assertAlmostEqual(proba[0][k], v, delta=1e-5 + 1e-3 * abs(v))

    def test_map_types_spelled_as_onnxruntime_does(self):
        sess = recur.InferenceSession(os.path.join(self.folder, "model.onnx"))
        self.assertEqual(sess.get_inputs()[0].type, "map(string,tensor(float))")
        self.assertEqual([o.type for o in sess.get_outputs()],
                         ["tensor(string)", "seq(map(string,tensor(float)))"])

    def test_bad_map_feeds(self):
        sess = recur.InferenceSession(os.path.join(self.folder, "model.onnx"))
        with self.assertRaises(recur.Error) as e:
            sess.run(None, {"features": {1: 2.0}})
        self.assertIn("keys must be str", str(e.exception))
        with self.assertRaises(recur.Error) as e:
            sess.run(None, {"features": {"a": "x"}})
        self.assertIn("are not float32 numbers", str(e.exception))


class SequencesTest(unittest.TestCase):
    """A list (or tuple) fed to a sequence input, as onnxruntime takes one; expected values
    from numpy."""

    @staticmethod
    def model(elem_type):
        from onnx import helper
        seq = helper.make_sequence_type_proto(elem_type)
        nodes = [helper.make_node("SequenceLength", ["x"], ["n"]),
                 helper.make_node("Identity", ["x"], ["same"])]
        outputs = [helper.make_tensor_value_info("n", TensorProto.INT64, []),
                   helper.make_value_info("same", seq)]
        if elem_type.HasField("tensor_type"):
            nodes.append(helper.make_node("ConcatFromSequence", ["x"], ["c"], axis=0))
            outputs.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, None))
        g = helper.make_graph(nodes, "g", [helper.make_value_info("x", seq)], outputs)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        return m.SerializeToString()

    def test_list_of_arrays(self):
        from onnx import helper
        sess = recur.InferenceSession(self.model(helper.make_tensor_type_proto(
            TensorProto.FLOAT, ["N"])))
        self.assertEqual(sess.get_inputs()[0].type, "seq(tensor(float))")
        items = [np.array([1.5, 2.0], np.float32), np.array([-3.0], np.float32)]
        for feed in (items, tuple(items)):
            n, same, c = sess.run(None, {"x": feed})
            self.assertEqual(int(n), 2)
            self.assertIsInstance(same, list)
            self.assertEqual(len(same), 2)
            for got, want in zip(same, items):
                np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(c, np.concatenate(items))
        # An empty list is an empty sequence, which ConcatFromSequence refuses.
        with self.assertRaises(recur.Error) as e:
            sess.run(None, {"x": []})
        self.assertIn("cannot concatenate an empty sequence", str(e.exception))

    def test_list_of_dicts(self):
        from onnx import helper
        map_type = onnx.TypeProto()
        map_type.map_type.key_type = TensorProto.STRING
        map_type.map_type.value_type.tensor_type.elem_type = TensorProto.FLOAT
        sess = recur.InferenceSession(self.model(map_type))
        items = [{"a": 1.0, "b": 2.5}, {"c": -1.0}]
        n, same = sess.run(None, {"x": items})
        self.assertEqual(int(n), 2)
        self.assertEqual(same, items)

    def test_bad_sequence_feeds(self):
        from onnx import helper
        sess = recur.InferenceSession(self.model(helper.make_tensor_type_proto(
            TensorProto.FLOAT, ["N"])))
        with self.assertRaises(recur.Error) as e:
            sess.run(None, {"x": [np.zeros(2, np.float32), np.zeros(2, np.int32)]})
        self.assertIn("'x'", str(e.exception))
        self.assertIn("int32", str(e.exception))
        with self.assertRaises(recur.Error) as e:
            sess.run(None, {"x": [np.zeros(2, np.float32), "text"]})
        self.assertIn("'x'", str(e.exception))
        self.assertIn("string", str(e.exception))
        map_type = onnx.TypeProto()
        map_type.map_type.key_type = TensorProto.INT64
        map_type.map_type.value_type.tensor_type.elem_type = TensorProto.FLOAT
        with self.assertRaises(recur.Error) as e:
            recur.InferenceSession(self.model(map_type)).run(None, {"x": [{1: 1.0}, 3]})
        self.assertIn("item 1 is not a dict", str(e.exception))


class ErrorsTest(unittest.TestCase):
    path = os.path.join(MODELS, "lstm_streaming", "model.onnx")

    def assert_error(self, code, text, fn, *args, **kwargs):
        with self.assertRaises(recur.Error) as ctx:
            fn(*args, **kwargs)
        self.assertIsInstance(ctx.exception, RuntimeError)
        self.assertEqual(ctx.exception.code, code)
        self.assertIn(text, str(ctx.exception))

    def test_bad_path(self):
        self.assert_error(recur.ErrorCode.IO, "no_such_model.onnx", recur.InferenceSession,
                          os.path.join(MODELS, "no_such_model.onnx"))

    def test_not_a_model(self):
        self.assert_error(recur.ErrorCode.INVALID_MODEL, "", recur.InferenceSession,
                          b"not an onnx model")

    def test_bad_provider_and_setting(self):
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT, "unknown provider 'tpu'",
                          recur.InferenceSession, self.path, providers=["tpu"])
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT, "unknown setting 'nobody.key'",
                          recur.InferenceSession, self.path, settings={"nobody.key": "1"})
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT, "got -2", recur.InferenceSession,
                          self.path, threads=-2)
        # Past int32 the binding itself used to refuse the call, naming its C++ signature.
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT, "got 1099511627776",
                          recur.InferenceSession, self.path, threads=2**40)
        self.assertEqual(len(recur.InferenceSession(self.path, threads=np.int64(1)).get_inputs()),
                         len(recur.InferenceSession(self.path).get_inputs()))
        for bad in (True, 1.5, "2"):
            with self.assertRaisesRegex(TypeError, "threads must be an int"):
                recur.InferenceSession(self.path, threads=bad)

    def test_options_refuse_what_they_do_not_have(self):
        so = recur.SessionOptions()
        with self.assertRaises(AttributeError):
            so.intra_op_num_thread = 4  # misspelt: it used to be kept and never read
        # onnxruntime's other options are there, and change nothing.
        so.enable_cpu_mem_arena = so.enable_mem_pattern = so.enable_mem_reuse = False
        so.optimized_model_filepath = ""
        so.execution_order = 1
        with self.assertRaises(AttributeError):
            recur.RunOptions().time_out_ms = 5
        with self.assertRaisesRegex(TypeError, "sess_options must be a recur.SessionOptions"):
            recur.InferenceSession(self.path, sess_options={"intra_op_num_threads": 1})
        with self.assertRaisesRegex(TypeError, r"not a str \(write \['onednn'\]\)"):
            recur.InferenceSession(self.path, providers="onednn")

    def test_model_argument_types(self):
        import pathlib
        self.assertTrue(recur.InferenceSession(pathlib.Path(self.path)).get_inputs())
        # A number was taken for a file name ("cannot open the model file '5'").
        with self.assertRaisesRegex(TypeError, "a model is a path .* not int"):
            recur.InferenceSession(5)

    def test_run_errors(self):
        feeds, _ = test_set("lstm_streaming")
        sess = recur.InferenceSession(self.path)
        wrong = dict(feeds, x=feeds["x"].astype(np.float64))
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT,
                          "input 'x' is float64 but the model expects float32", sess.run, None,
                          wrong)
        missing = {k: v for k, v in feeds.items() if k != "c0"}
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT, "missing input 'c0'", sess.run,
                          None, missing)
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT, "the model has no output 'logits'",
                          sess.run, ["logits"], feeds)
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT, "unknown input 'state'", sess.run,
                          None, dict(feeds, state=feeds["h0"]))
        # numpy made None an object array, and the error spoke of its element 0.
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT, "input 'x' is None, not an array",
                          sess.run, None, dict(feeds, x=None))
        # A str was iterated: "h_n" asked for the outputs "h", "_" and "n".
        with self.assertRaisesRegex(TypeError, r"not a str \(write \['h_n'\]\)"):
            sess.run("h_n", feeds)
        with self.assertRaisesRegex(TypeError, "must hold str, not int"):
            sess.run([0], feeds)
        self.assertEqual(len(sess.run([b"h_n"], feeds)), 1)  # as onnxruntime takes it
        with self.assertRaisesRegex(TypeError, "input_feed must be a dict .* not list"):
            sess.run(None, list(feeds.values()))
        complex_x = dict(feeds, x=feeds["x"].astype(np.complex64))
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT,
                          "input 'x' has numpy dtype complex64", sess.run, None, complex_x)

    def test_run_options_terminate_and_timeout(self):
        feeds, expected = test_set("lstm_streaming")
        sess = recur.InferenceSession(self.path)
        ro = recur.RunOptions()
        ro.terminate = True
        self.assertTrue(ro.terminate)
        self.assert_error(recur.ErrorCode.CANCELLED, "terminate", sess.run, None, feeds, ro)
        ro.terminate = False  # as in onnxruntime: later runs go ahead
        (y, _, _) = sess.run(None, feeds, ro)
        self.assertTrue(close(y, expected["y"]))
        # A timeout far shorter than the run: an LSTM over 20000 steps.
        from onnx import helper
        hidden, size = 64, 32
        rng = np.random.default_rng(3)
        w = rng.uniform(-0.1, 0.1, (1, 4 * hidden, size)).astype(np.float32)
        r = rng.uniform(-0.1, 0.1, (1, 4 * hidden, hidden)).astype(np.float32)
        graph = helper.make_graph(
            [helper.make_node("LSTM", ["X", "W", "R"], ["Y"], hidden_size=hidden)], "long",
            [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["T", 1, size])],
            [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
            [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
        long_sess = recur.InferenceSession(model.SerializeToString())
        x = rng.uniform(-1, 1, (20000, 1, size)).astype(np.float32)
        slow = recur.RunOptions()
        slow.timeout_ms = 1
        self.assert_error(recur.ErrorCode.CANCELLED, "deadline", long_sess.run, None, {"X": x},
                          slow)
        slow.timeout_ms = 0
        self.assertEqual(long_sess.run(None, {"X": x[:5]}, slow)[0].shape, (5, 1, 1, hidden))
        slow.timeout_ms = float("inf")  # never reached
        self.assertEqual(long_sess.run(None, {"X": x[:5]}, slow)[0].shape, (5, 1, 1, hidden))
        for bad in (-1, float("nan"), "soon"):
            with self.assertRaises(ValueError):
                slow.timeout_ms = bad

    def test_run_options_like_onnxruntime(self):
        feeds, _ = test_set("lstm_streaming")
        sess = recur.InferenceSession(self.path)
        ro = recur.RunOptions()
        ro.log_severity_level = 3
        ro.logid = "stream-7"
        ro.only_execute_path_to_fetches = True
        ro.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        self.assertEqual(ro.get_run_config_entry("memory.enable_memory_arena_shrinkage"), "cpu:0")
        self.assertEqual(len(sess.run(["h_n"], feeds, ro)), 1)
        with self.assertRaises(TypeError):
            sess.run(None, feeds, {"terminate": True})

    def test_outputs_not_asked_for_do_not_run(self):
        # onnxruntime issue 16483: a Cast that fails only on the path of an output not asked
        # for. recur runs only the nodes the requested outputs need.
        from onnx import helper
        graph = helper.make_graph(
            [helper.make_node("Add", ["a", "a"], ["c"]),
             helper.make_node("Cast", ["b"], ["d"], to=TensorProto.INT64)], "g",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N"]),
             helper.make_tensor_value_info("b", TensorProto.STRING, ["M"])],
            [helper.make_tensor_value_info("c", TensorProto.FLOAT, ["N"]),
             helper.make_tensor_value_info("d", TensorProto.INT64, ["M"])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        sess = recur.InferenceSession(model.SerializeToString())
        feeds = {"a": np.array([1.0], dtype=np.float32), "b": np.array(["foo"], dtype=object)}
        (c,) = sess.run(["c"], feeds)
        np.testing.assert_array_equal(c, [2.0])
        self.assert_error(recur.ErrorCode.INVALID_ARGUMENT, "foo", sess.run, None, feeds)

    def test_plan_only_session_cannot_run(self):
        feeds, _ = test_set("lstm_streaming")
        sess = recur.InferenceSession(self.path, plan_only=True)
        self.assertIn("LSTM", sess.explain())
        self.assert_error(recur.ErrorCode.FAILED_PRECONDITION, "plan_only", sess.run, None,
                          feeds)


if __name__ == "__main__":
    unittest.main(verbosity=2)
