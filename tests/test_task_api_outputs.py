"""What a model's methods return to task.evaluate(model) is checked (issue 28, cases 17-19):
strings, objects, ragged lists, generators, 1e308, width 0, wrong lengths, NaN likelihoods or
predictions are each one GenebError naming the method and what was expected; a 1-D P(class 1)
from ``predict`` on a binary task is read as probabilities (MCC as scikit-learn computes it
from the thresholded probabilities), never cast to class ids."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import matthews_corrcoef, roc_auc_score

import geneb
from geneb.errors import GenebError


def _model(method: str, fn):
    return type("M", (), {method: lambda self, *a: fn(*a)})()


@pytest.fixture(scope="module")
def cls_task():
    return geneb.load_task("syn_promoter_tata")


@pytest.fixture(scope="module")
def reg_task(tmp_path_factory):
    d = tmp_path_factory.mktemp("reg")
    rng = np.random.default_rng(1)
    for split, n in (("train", 60), ("test", 30)):
        seqs = ["".join(rng.choice(list("ACGT"), 40)) for _ in range(n)]
        pd.DataFrame({"sequence": seqs, "label": rng.normal(size=n)}).to_csv(
            d / f"{split}.csv", index=False)
    (d / "task.json").write_text(json.dumps({"kind": "regression"}))
    return geneb.load_task(d)


@pytest.fixture(scope="module")
def zs_task(brca1_folder: Path):
    return geneb.load_task(str(brca1_folder), window=32)


BAD_EMBEDDINGS = {
    "strings": (lambda s: [["a", "b"] for _ in s], "returned strings"),
    "numeric strings": (lambda s: [["1.0", "2"] for _ in s], "returned strings"),
    "objects": (lambda s: [object() for _ in s], "returned objects"),
    "a dict": (lambda s: {i: [1.0] for i in range(len(s))}, "returned a dict"),
    "ragged rows": (lambda s: [[1.0] * (1 + i % 2) for i in range(len(s))], "unequal length"),
    "a generator": (lambda s: ([1.0, 2.0] for _ in s), "returned a generator"),
    "1e308": (lambda s: np.full((len(s), 3), 1e308), "beyond float32's range"),
    "width 0": (lambda s: np.zeros((len(s), 0)), r"shape \(\d+, 0\)"),
    "one row short": (lambda s: np.ones((len(s) - 1, 3)), "expected shape"),
    "NaN": (lambda s: np.full((len(s), 3), np.nan), "NaN"),
    "None": (lambda s: None, "returned None"),
    "complex": (lambda s: np.ones((len(s), 2)) * 1j, "complex"),
}


@pytest.mark.parametrize("case", sorted(BAD_EMBEDDINGS))
@pytest.mark.parametrize("which", ["cls", "reg", "zs"])
def test_bad_embed_is_one_error_naming_the_method(case, which, request):
    task = request.getfixturevalue(f"{which}_task")
    fn, msg = BAD_EMBEDDINGS[case]
    with pytest.raises(GenebError, match=msg) as e:
        task.evaluate(_model("embed", fn))
    assert str(e.value).startswith("model.embed returned"), str(e.value)


@pytest.mark.parametrize("case", ["strings", "objects", "ragged rows", "a generator", "1e308"])
def test_bad_predict_is_one_error(case, cls_task):
    fn, msg = BAD_EMBEDDINGS[case]
    with pytest.raises(GenebError, match="model.predict returned"):
        cls_task.evaluate(_model("predict", fn))


def test_predict_probabilities_must_be_probabilities(cls_task):
    n = len(cls_task.split("test").labels)
    with pytest.raises(GenebError, match="sum to"):
        cls_task.evaluate(_model("predict", lambda s: np.full((n, 2), 0.7)))
    with pytest.raises(GenebError, match=r"in \[0, 1\]"):
        cls_task.evaluate(_model("predict", lambda s: np.linspace(-0.5, 0.5, n)))
    with pytest.raises(GenebError, match="ids in 0..1"):
        cls_task.evaluate(_model("predict", lambda s: np.full(n, 2)))


def test_one_dimensional_p_class1_is_read_as_probabilities(cls_task):
    y = cls_task.split("test").labels
    rng = np.random.default_rng(0)
    p_perfect = np.where(y == 1, 0.9, 0.2)
    res = cls_task.evaluate(_model("predict", lambda s: p_perfect))
    assert res["predict_mcc"] == 1.0 and res["predict_auroc"] == 1.0
    p = np.clip(0.5 * y + rng.uniform(0, 0.6, len(y)), 0.01, 0.99)
    res = cls_task.evaluate(_model("predict", lambda s: p))
    assert res["predict_mcc"] == pytest.approx(matthews_corrcoef(y, p > 0.5), abs=1e-12)
    assert res["predict_auroc"] == pytest.approx(roc_auc_score(y, p), abs=1e-9)


def test_regression_predict_nan_and_length(reg_task):
    n = len(reg_task.split("test").labels)
    with pytest.raises(GenebError, match="model.predict returned 1 NaN"):
        reg_task.evaluate(_model("predict", lambda s: np.r_[np.nan, np.zeros(n - 1)]))
    with pytest.raises(GenebError, match="model.predict returned shape"):
        reg_task.evaluate(_model("predict", lambda s: np.zeros(n + 1)))


def test_likelihoods_checked(zs_task):
    with pytest.raises(GenebError, match=r"model.log_likelihood returned shape \(\d+,\); "
                                         r"expected shape \(\d+,\)"):
        zs_task.evaluate(_model("log_likelihood", lambda s: np.zeros(len(s) + 1)))
    with pytest.raises(GenebError, match="model.log_likelihood returned .* NaN"):
        zs_task.evaluate(_model("log_likelihood", lambda s: np.full(len(s), np.nan)))
    with pytest.raises(GenebError, match="model.masked_log_probs returned .* NaN"):
        zs_task.evaluate(_model("masked_log_probs", lambda s, p: np.full((len(s), 4), np.nan)))
    with pytest.raises(GenebError, match=r"expected log-probabilities \(<= 0\)"):
        zs_task.evaluate(_model("masked_log_probs", lambda s, p: np.ones((len(s), 4))))
