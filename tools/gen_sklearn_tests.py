#!/usr/bin/python3
"""Writes model test folders for the ai.onnx.ml scorers into tests/data/ml: scikit-learn models
fitted on seeded random data, turned into ONNX nodes by the small converters below (written
for these tests from the operators' specifications; no converter package is used), with
scikit-learn's own predictions as the expected outputs. So the expected values come from
scikit-learn, not from recur, and a mismatch is a mistake in recur's kernels or in the few lines
here that map a fitted model to attributes. tools/ort_conformance.py runs the same folders
through ONNX Runtime as a second check.

  sk_logreg_binary       StandardScaler -> Scaler, LogisticRegression (2 classes) -> the binary
                         LinearClassifier (one coefficient row, LOGISTIC): probabilities [1 - p, p]
  sk_logreg_multinomial  LogisticRegression (3 classes, string labels) -> LinearClassifier
                         (SOFTMAX)
  sk_imputer_linreg      SimpleImputer(mean) -> Imputer (NaN replaced), LinearRegression with two
                         targets -> LinearRegressor
  sk_normalizer          Normalizer(l1) and Normalizer(l2) -> Normalizer L1 and L2
  sk_forest_regressor    RandomForestRegressor -> TreeEnsembleRegressor (AVERAGE)
  sk_forest_classifier   RandomForestClassifier (3 classes) -> TreeEnsembleClassifier (class
                         probabilities of the leaves, each divided by the number of trees)
  sk_gbm_binary          GradientBoostingClassifier (2 classes) -> TreeEnsembleClassifier with
                         every leaf naming class 0, base value the initial log-odds, LOGISTIC
  sk_gbm_regressor       GradientBoostingRegressor -> TreeEnsembleRegressor (SUM, base value)
  sk_svc_binary          SVC (RBF, 2 classes, probability=True) -> SVMClassifier with libsvm's
                         signs (scikit-learn negates a two-class model's dual coefficients and
                         intercept; they are negated back) and Platt's prob_a, prob_b
  sk_svc_multiclass      SVC (POLY, 3 classes, string labels, decision_function_shape='ovo')
                         -> SVMClassifier: the label and the three one-against-one scores
  sk_onehot_logreg       OneHotEncoder(handle_unknown='ignore') on two int64 columns ->
                         ArrayFeatureExtractor and OneHotEncoder per column, FeatureVectorizer,
                         then LogisticRegression (3 classes) -> LinearClassifier (SOFTMAX)
  sk_svr                 SVR (RBF) and OneClassSVM (SIGMOID) -> SVMRegressor, the second with
                         one_class=1 (predict gives +1 / -1)
  sk_forest_zipmap       sk_forest_classifier as converters write it by default: ZipMap turns
                         the probabilities into a sequence of {class: probability} maps
  sk_dictvec_logreg      DictVectorizer on a {name: value} map (the input is a map; four test
                         sets, two with a name unseen in training), LogisticRegression (3 classes,
                         string labels) -> LinearClassifier (SOFTMAX), then ZipMap

Needs python3-sklearn (Debian), at generation time only:
  /usr/bin/python3 tools/gen_sklearn_tests.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, TypeProto, helper
from sklearn.feature_extraction import DictVectorizer
from sklearn.ensemble import (GradientBoostingClassifier, GradientBoostingRegressor,
                              RandomForestClassifier, RandomForestRegressor)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.preprocessing import Normalizer, OneHotEncoder, StandardScaler
from sklearn.svm import SVC, SVR, OneClassSVM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_folder import write_test_folder  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "ml")
ML = "ai.onnx.ml"
F = 5  # features


def model(name, nodes, outputs, n_features=F):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", n_features])],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15),
                                                helper.make_opsetid(ML, 3)])
    m.ir_version = 8
    return m


def data(seed, n=40):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, F)).astype(np.float32)


def tree_attributes(estimators, prefix, weight_of):
    """The nodes_* and <prefix>_* attributes of fitted sklearn trees. weight_of(tree, leaf)
    gives a leaf's [(output id, weight)]."""
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_values",
                         "nodes_modes", "nodes_truenodeids", "nodes_falsenodeids")}
    for k in ("treeids", "nodeids", "ids", "weights"):
        a[prefix + "_" + k] = []
    for t, est in enumerate(estimators):
        tree = est.tree_
        for i in range(tree.node_count):
            leaf = tree.children_left[i] == -1
            a["nodes_treeids"].append(t)
            a["nodes_nodeids"].append(i)
            a["nodes_featureids"].append(0 if leaf else int(tree.feature[i]))
            a["nodes_values"].append(0.0 if leaf else float(tree.threshold[i]))
            a["nodes_modes"].append("LEAF" if leaf else "BRANCH_LEQ")
            a["nodes_truenodeids"].append(0 if leaf else int(tree.children_left[i]))
            a["nodes_falsenodeids"].append(0 if leaf else int(tree.children_right[i]))
            if leaf:
                for out, w in weight_of(tree, i):
                    a[prefix + "_treeids"].append(t)
                    a[prefix + "_nodeids"].append(i)
                    a[prefix + "_ids"].append(out)
                    a[prefix + "_weights"].append(float(w))
    return a



def logreg_binary():
    x, xt = data(1), data(2, 12)
    y = (x[:, 0] - 0.5 * x[:, 2] + 0.3 * x[:, 4] > 0.1).astype(np.int64)
    scaler = StandardScaler().fit(x)
    clf = LogisticRegression().fit(scaler.transform(x), y)
    nodes = [
        helper.make_node("Scaler", ["X"], ["scaled"], domain=ML,
                         offset=scaler.mean_.tolist(), scale=(1 / scaler.scale_).tolist()),
        helper.make_node("LinearClassifier", ["scaled"], ["label", "probabilities"], domain=ML,
                         coefficients=clf.coef_.ravel().tolist(),
                         intercepts=clf.intercept_.tolist(), classlabels_ints=[0, 1],
                         post_transform="LOGISTIC"),
    ]
    xs = scaler.transform(xt)
    m = model("sk_logreg_binary", nodes, [("label", TensorProto.INT64, ["N"]),
                                          ("probabilities", TensorProto.FLOAT, ["N", 2])])
    write_test_folder(os.path.join(ROOT, "sk_logreg_binary"), m, [("X", xt)],
                      [("label", clf.predict(xs).astype(np.int64)),
                       ("probabilities", clf.predict_proba(xs).astype(np.float32))])


def logreg_multinomial():
    x, xt = data(3), data(4, 12)
    names = np.array(["low", "mid", "high"])
    s = x[:, 1] + 0.5 * x[:, 3]
    y = names[np.digitize(s, [-0.5, 0.5])]
    clf = LogisticRegression(C=2.0).fit(x, y)
    nodes = [helper.make_node("LinearClassifier", ["X"], ["label", "probabilities"], domain=ML,
                              coefficients=clf.coef_.ravel().tolist(),
                              intercepts=clf.intercept_.tolist(),
                              classlabels_strings=clf.classes_.tolist(),
                              post_transform="SOFTMAX", multi_class=1)]
    m = model("sk_logreg_multinomial", nodes, [("label", TensorProto.STRING, ["N"]),
                                               ("probabilities", TensorProto.FLOAT, ["N", 3])])
    write_test_folder(os.path.join(ROOT, "sk_logreg_multinomial"), m, [("X", xt)],
                      [("label", clf.predict(xt).astype(object)),
                       ("probabilities", clf.predict_proba(xt).astype(np.float32))])


def imputer_linreg():
    x, xt = data(5), data(6, 12)
    rng = np.random.default_rng(7)
    x[rng.random(x.shape) < 0.1] = np.nan
    xt[rng.random(xt.shape) < 0.2] = np.nan
    imp = SimpleImputer(strategy="mean").fit(x)
    xf = imp.transform(x)
    y = np.stack([xf @ [1.0, -2.0, 0.5, 0.0, 3.0] + 0.25, xf @ [0.0, 1.0, 1.0, -1.0, 0.5]], 1)
    reg = LinearRegression().fit(xf, y + 0.01 * rng.standard_normal(y.shape))
    nodes = [
        helper.make_node("Imputer", ["X"], ["filled"], domain=ML,
                         imputed_value_floats=imp.statistics_.tolist(),
                         replaced_value_float=float("nan")),
        helper.make_node("LinearRegressor", ["filled"], ["variable"], domain=ML,
                         coefficients=reg.coef_.ravel().tolist(),
                         intercepts=reg.intercept_.tolist(), targets=2),
    ]
    m = model("sk_imputer_linreg", nodes, [("variable", TensorProto.FLOAT, ["N", 2])])
    write_test_folder(os.path.join(ROOT, "sk_imputer_linreg"), m, [("X", xt)],
                      [("variable", reg.predict(imp.transform(xt)).astype(np.float32))])


def normalizer():
    xt = data(8, 12)
    xt[3] = 0  # a zero row stays zero
    nodes = [helper.make_node("Normalizer", ["X"], ["l1"], domain=ML, norm="L1"),
             helper.make_node("Normalizer", ["X"], ["l2"], domain=ML, norm="L2")]
    m = model("sk_normalizer", nodes, [("l1", TensorProto.FLOAT, ["N", F]),
                                       ("l2", TensorProto.FLOAT, ["N", F])])
    write_test_folder(os.path.join(ROOT, "sk_normalizer"), m, [("X", xt)],
                      [("l1", Normalizer("l1").transform(xt).astype(np.float32)),
                       ("l2", Normalizer("l2").transform(xt).astype(np.float32))])


def forest_regressor():
    x, xt = data(9, 80), data(10, 16)
    y = np.sin(x[:, 0]) + x[:, 1] * x[:, 2] - 0.5 * x[:, 3]
    reg = RandomForestRegressor(n_estimators=6, max_depth=5, random_state=0).fit(x, y)
    a = tree_attributes(reg.estimators_, "target",
                        lambda tree, i: [(0, tree.value[i][0][0])])
    nodes = [helper.make_node("TreeEnsembleRegressor", ["X"], ["variable"], domain=ML,
                              n_targets=1, aggregate_function="AVERAGE", **a)]
    m = model("sk_forest_regressor", nodes, [("variable", TensorProto.FLOAT, ["N", 1])])
    write_test_folder(os.path.join(ROOT, "sk_forest_regressor"), m, [("X", xt)],
                      [("variable", reg.predict(xt).astype(np.float32).reshape(-1, 1))])


def fitted_forest():
    """A 3-class RandomForestClassifier, its test rows, and its TreeEnsembleClassifier node."""
    x, xt = data(11, 90), data(12, 16)
    y = np.digitize(x[:, 0] + x[:, 1] - x[:, 4], [-0.7, 0.7]).astype(np.int64) * 10
    clf = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0).fit(x, y)
    n = len(clf.estimators_)

    def leaf(tree, i):
        p = tree.value[i][0] / tree.value[i][0].sum()
        return [(c, p[c] / n) for c in range(len(p))]

    a = tree_attributes(clf.estimators_, "class", leaf)
    node = helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"],
                            domain=ML, classlabels_int64s=clf.classes_.tolist(), **a)
    return clf, xt, node


def forest_classifier():
    clf, xt, node = fitted_forest()
    m = model("sk_forest_classifier", [node], [("label", TensorProto.INT64, ["N"]),
                                               ("probabilities", TensorProto.FLOAT, ["N", 3])])
    write_test_folder(os.path.join(ROOT, "sk_forest_classifier"), m, [("X", xt)],
                      [("label", clf.predict(xt).astype(np.int64)),
                       ("probabilities", clf.predict_proba(xt).astype(np.float32))])


def map_type(key_type):
    """map(key_type, float), built by hand: onnx 1.12's helper has no make_map_type_proto."""
    t = TypeProto()
    t.map_type.key_type = key_type
    t.map_type.value_type.tensor_type.elem_type = TensorProto.FLOAT
    return t


def seq_map_type(key_type):
    return helper.make_sequence_type_proto(map_type(key_type))


def forest_zipmap():
    """The forest as skl2onnx converts a classifier by default: the probabilities go through
    ZipMap, one {class: probability} map per row."""
    clf, xt, node = fitted_forest()
    nodes = [node, helper.make_node("ZipMap", ["probabilities"], ["output_probability"],
                                    domain=ML, classlabels_int64s=clf.classes_.tolist())]
    graph = helper.make_graph(
        nodes, "sk_forest_zipmap",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", F])],
        [helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
         helper.make_value_info("output_probability", seq_map_type(TensorProto.INT64))])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15),
                                                helper.make_opsetid(ML, 3)])
    m.ir_version = 8
    proba = clf.predict_proba(xt).astype(np.float32)
    maps = [{int(c): row[k] for k, c in enumerate(clf.classes_)} for row in proba]
    write_test_folder(os.path.join(ROOT, "sk_forest_zipmap"), m, [("X", xt)],
                      [("label", clf.predict(xt).astype(np.int64)),
                       ("output_probability", maps)])


def dictvec_logreg():
    """DictVectorizer over {feature name: value} dicts, then a multinomial LogisticRegression
    with string labels and ZipMap: a model whose input and output are maps. One dict per test
    set, as DictVectorizer takes one map per run; some hold names unseen in training."""
    rng = np.random.default_rng(31)
    names = ["age", "height", "score", "weight"]

    def sample(extra=()):
        keys = list(rng.choice(names, rng.integers(1, 5), replace=False)) + list(extra)
        return {str(k): np.float32(rng.standard_normal()) for k in keys}

    train = [sample() for _ in range(120)]
    vec = DictVectorizer(sparse=False).fit(train)
    xs = vec.transform(train)
    labels = np.array(["a", "b", "c"])
    y = labels[np.digitize(xs[:, 0] - xs[:, 2] + 0.5 * xs[:, 3], [-0.5, 0.5])]
    clf = LogisticRegression(C=2.0).fit(xs, y)
    nodes = [helper.make_node("DictVectorizer", ["features"], ["row"], domain=ML,
                              string_vocabulary=list(vec.feature_names_)),
             helper.make_node("LinearClassifier", ["row"], ["label", "probabilities"], domain=ML,
                              coefficients=clf.coef_.ravel().tolist(),
                              intercepts=clf.intercept_.tolist(),
                              classlabels_strings=clf.classes_.tolist(),
                              post_transform="SOFTMAX", multi_class=1),
             helper.make_node("ZipMap", ["probabilities"], ["output_probability"], domain=ML,
                              classlabels_strings=clf.classes_.tolist())]
    graph = helper.make_graph(
        nodes, "sk_dictvec_logreg", [helper.make_value_info("features",
                                                            map_type(TensorProto.STRING))],
        [helper.make_tensor_value_info("label", TensorProto.STRING, [1]),
         helper.make_value_info("output_probability", seq_map_type(TensorProto.STRING))])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15),
                                                helper.make_opsetid(ML, 3)])
    m.ir_version = 8
    sets = []
    for i in range(4):
        d = sample(extra=("unseen",) if i % 2 else ())
        row = vec.transform([d])
        proba = clf.predict_proba(row)[0].astype(np.float32)
        sets.append(([("features", d)],
                     [("label", clf.predict(row).astype(object)),
                      ("output_probability",
                       [{str(c): proba[k] for k, c in enumerate(clf.classes_)}])]))
    write_test_folder(os.path.join(ROOT, "sk_dictvec_logreg"), m, *sets[0], more_sets=sets[1:])


def gbm_binary():
    x, xt = data(13, 100), data(14, 16)
    y = (x[:, 0] * x[:, 1] + x[:, 2] > 0).astype(np.int64)
    clf = GradientBoostingClassifier(n_estimators=8, max_depth=3, learning_rate=0.3,
                                     random_state=0).fit(x, y)
    lr = clf.learning_rate
    a = tree_attributes([e[0] for e in clf.estimators_], "class",
                        lambda tree, i: [(0, lr * tree.value[i][0][0])])
    assert min(a["class_weights"]) < 0  # a negative leaf: the label is where the score is > 0
    init = float(clf._raw_predict_init(x[:1])[0, 0])
    nodes = [helper.make_node("TreeEnsembleClassifier", ["X"], ["label", "probabilities"],
                              domain=ML, classlabels_int64s=[0, 1], base_values=[init],
                              post_transform="LOGISTIC", **a)]
    m = model("sk_gbm_binary", nodes, [("label", TensorProto.INT64, ["N"]),
                                       ("probabilities", TensorProto.FLOAT, ["N", 2])])
    write_test_folder(os.path.join(ROOT, "sk_gbm_binary"), m, [("X", xt)],
                      [("label", clf.predict(xt).astype(np.int64)),
                       ("probabilities", clf.predict_proba(xt).astype(np.float32))])


def gbm_regressor():
    x, xt = data(15, 100), data(16, 16)
    y = x[:, 0] ** 2 - x[:, 1] + 0.5 * x[:, 2] * x[:, 3]
    reg = GradientBoostingRegressor(n_estimators=10, max_depth=3, learning_rate=0.2,
                                    random_state=0).fit(x, y)
    lr = reg.learning_rate
    a = tree_attributes([e[0] for e in reg.estimators_], "target",
                        lambda tree, i: [(0, lr * tree.value[i][0][0])])
    init = float(reg._raw_predict_init(x[:1])[0, 0])
    nodes = [helper.make_node("TreeEnsembleRegressor", ["X"], ["variable"], domain=ML,
                              n_targets=1, aggregate_function="SUM", base_values=[init], **a)]
    m = model("sk_gbm_regressor", nodes, [("variable", TensorProto.FLOAT, ["N", 1])])
    write_test_folder(os.path.join(ROOT, "sk_gbm_regressor"), m, [("X", xt)],
                      [("variable", reg.predict(xt).astype(np.float32).reshape(-1, 1))])


def svm_attributes(m, kernel, sign=1.0):
    """The support-vector attributes every fitted libsvm model shares. sign -1 undoes
    scikit-learn's negation of a two-class SVC."""
    return dict(kernel_type=kernel, kernel_params=[float(m._gamma), float(m.coef0),
                                                    float(m.degree)],
                support_vectors=m.support_vectors_.ravel().tolist(),
                coefficients=(sign * m.dual_coef_).ravel().tolist(),
                rho=(sign * m.intercept_).tolist())


def svc_binary():
    x, xt = data(17, 60), data(18, 16)
    y = (x[:, 0] ** 2 + x[:, 1] - 0.5 * x[:, 4] > 0.8).astype(np.int64)
    clf = SVC(kernel="rbf", C=2.0, probability=True, random_state=0).fit(x, y)
    nodes = [helper.make_node("SVMClassifier", ["X"], ["label", "probabilities"], domain=ML,
                              classlabels_ints=clf.classes_.tolist(),
                              vectors_per_class=clf.n_support_.tolist(),
                              prob_a=clf.probA_.tolist(), prob_b=clf.probB_.tolist(),
                              **svm_attributes(clf, "RBF", sign=-1.0))]
    m = model("sk_svc_binary", nodes, [("label", TensorProto.INT64, ["N"]),
                                       ("probabilities", TensorProto.FLOAT, ["N", 2])])
    write_test_folder(os.path.join(ROOT, "sk_svc_binary"), m, [("X", xt)],
                      [("label", clf.predict(xt).astype(np.int64)),
                       ("probabilities", clf.predict_proba(xt).astype(np.float32))])


def svc_multiclass():
    x, xt = data(19, 75), data(20, 16)
    names = np.array(["a", "b", "c"])
    y = names[np.digitize(x[:, 2] - x[:, 3] + 0.5 * x[:, 0] * x[:, 1], [-0.6, 0.6])]
    clf = SVC(kernel="poly", degree=2, coef0=1.0, C=1.5, decision_function_shape="ovo").fit(x, y)
    nodes = [helper.make_node("SVMClassifier", ["X"], ["label", "scores"], domain=ML,
                              classlabels_strings=clf.classes_.tolist(),
                              vectors_per_class=clf.n_support_.tolist(),
                              **svm_attributes(clf, "POLY"))]
    m = model("sk_svc_multiclass", nodes, [("label", TensorProto.STRING, ["N"]),
                                           ("scores", TensorProto.FLOAT, ["N", 3])])
    write_test_folder(os.path.join(ROOT, "sk_svc_multiclass"), m, [("X", xt)],
                      [("label", clf.predict(xt).astype(object)),
                       ("scores", clf.decision_function(xt).astype(np.float32))])


def onehot_logreg():
    rng = np.random.default_rng(23)
    x = np.stack([rng.integers(0, 4, 90), rng.choice([10, 20, 30], 90)], 1).astype(np.int64)
    xt = np.stack([rng.integers(0, 5, 16), rng.choice([10, 20, 30, 40], 16)], 1).astype(np.int64)
    y = (x[:, 0] + x[:, 1] // 10 + rng.integers(0, 2, 90)) % 3
    enc = OneHotEncoder(handle_unknown="ignore").fit(x)
    clf = LogisticRegression(C=3.0).fit(enc.transform(x).toarray(), y)
    widths = [len(c) for c in enc.categories_]
    nodes = []
    for i, cats in enumerate(enc.categories_):
        nodes += [helper.make_node("ArrayFeatureExtractor", ["X", f"column{i}"], [f"x{i}"],
                                   domain=ML),
                  helper.make_node("OneHotEncoder", [f"x{i}"], [f"onehot{i}"], domain=ML,
                                   cats_int64s=cats.astype(np.int64).tolist(), zeros=1)]
    nodes += [helper.make_node("FeatureVectorizer", ["onehot0", "onehot1"], ["encoded"],
                               domain=ML, inputdimensions=widths),
              helper.make_node("LinearClassifier", ["encoded"], ["label", "probabilities"],
                               domain=ML, coefficients=clf.coef_.ravel().tolist(),
                               intercepts=clf.intercept_.tolist(),
                               classlabels_ints=clf.classes_.tolist(), post_transform="SOFTMAX",
                               multi_class=1)]
    graph = helper.make_graph(
        nodes, "sk_onehot_logreg", [helper.make_tensor_value_info("X", TensorProto.INT64,
                                                                  ["N", 2])],
        [helper.make_tensor_value_info("encoded", TensorProto.FLOAT, ["N", sum(widths)]),
         helper.make_tensor_value_info("label", TensorProto.INT64, ["N"]),
         helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor(f"column{i}", TensorProto.INT64, [1], [i]) for i in range(2)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15),
                                                helper.make_opsetid(ML, 3)])
    m.ir_version = 8
    encoded = enc.transform(xt).toarray()
    assert (encoded.sum(1) < 2).any()  # some test rows hold categories unseen in training
    write_test_folder(os.path.join(ROOT, "sk_onehot_logreg"), m, [("X", xt)],
                      [("encoded", encoded.astype(np.float32)),
                       ("label", clf.predict(encoded).astype(np.int64)),
                       ("probabilities", clf.predict_proba(encoded).astype(np.float32))])


def svr():
    x, xt = data(21, 70), data(22, 16)
    y = np.sin(x[:, 0]) + 0.5 * x[:, 1] * x[:, 2]
    reg = SVR(kernel="rbf", C=3.0, epsilon=0.05).fit(x, y)
    one = OneClassSVM(kernel="sigmoid", gamma=0.1, coef0=0.2, nu=0.3).fit(x)
    nodes = [helper.make_node("SVMRegressor", ["X"], ["variable"], domain=ML,
                              n_supports=len(reg.support_), **svm_attributes(reg, "RBF")),
             helper.make_node("SVMRegressor", ["X"], ["inlier"], domain=ML, one_class=1,
                              n_supports=len(one.support_), **svm_attributes(one, "SIGMOID"))]
    predicted = one.predict(xt)
    assert set(predicted) == {-1, 1}  # both answers occur
    m = model("sk_svr", nodes, [("variable", TensorProto.FLOAT, ["N", 1]),
                                ("inlier", TensorProto.FLOAT, ["N", 1])])
    write_test_folder(os.path.join(ROOT, "sk_svr"), m, [("X", xt)],
                      [("variable", reg.predict(xt).astype(np.float32).reshape(-1, 1)),
                       ("inlier", predicted.astype(np.float32).reshape(-1, 1))])


if __name__ == "__main__":
    for make in (logreg_binary, logreg_multinomial, imputer_linreg, normalizer, forest_regressor,
                 forest_classifier, forest_zipmap, gbm_binary, gbm_regressor, svc_binary,
                 svc_multiclass, onehot_logreg, svr, dictvec_logreg):
        make()
        print("wrote", make.__name__)
