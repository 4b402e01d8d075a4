"""The task API: geneb.load_task returns typed tasks whose evaluate(model) takes any object with
some of embed / log_likelihood / masked_log_probs / predict (plain numpy classes here), checked
against scikit-learn / scipy computed directly on the same features."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import (
    accuracy_score,
    average_precision_score,
    matthews_corrcoef,
    roc_auc_score,
)

import geneb
from geneb.errors import GenebError
from geneb.tasks import (
    ClassificationTask,
    RegressionTask,
    SupervisedVariantTask,
    Task,
    ZeroShotVariantTask,
)

KMERS = ["".join(p) for p in itertools.product("ACGT", repeat=2)]
W = 64


class OnlyEmbed:
    """A user's model: nothing but a numpy embed (2-mer frequencies). No geneb base class."""

    def embed(self, seqs):
        return np.array([[s.count(k) / max(1, len(s) - 1) for k in KMERS] for s in seqs])


class Projection:
    """tanh(one-hot window x a fixed random matrix): continuous embeddings without exact ties
    (k-mer spectra tie often, and then float rounding, not the method, orders the ties)."""

    R = np.random.default_rng(5).normal(size=(4 * W, 8))

    def embed(self, seqs):
        codes = np.array([["ACGT".find(b) for b in s] for s in seqs])
        onehot = (codes[..., None] == np.arange(4)).reshape(len(seqs), -1)
        return np.tanh(onehot @ self.R)


class OnlyLikelihood:
    """A smooth, non-additive log-likelihood of the whole window (no tied LLRs)."""

    def log_likelihood(self, seqs):
        return -(Projection().embed(seqs) ** 2).sum(1) / 100


class OnlyMasked:
    """log-softmax over A, C, G, T of a projection of the window with the position masked."""

    R = np.random.default_rng(6).normal(size=(8, 4))

    def masked_log_probs(self, seqs, positions):
        masked = [s[:p] + "N" + s[p + 1 :] for s, p in zip(seqs, positions, strict=True)]
        z = Projection().embed(masked) @ self.R
        return z - np.log(np.exp(z).sum(1, keepdims=True))


def _mann_whitney(y: np.ndarray, score: np.ndarray) -> float:
    """AUROC as scipy's Mann-Whitney U over exact ties (sklearn's roc_curve may merge scores
    that differ by float rounding, which a sum of log-probabilities produces)."""
    u = stats.mannwhitneyu(score[y == 1], score[y == 0]).statistic
    return float(u / ((y == 1).sum() * (y == 0).sum()))


@pytest.fixture(scope="module")
def brca1(models_dir: Path) -> str:
    p = models_dir.parent / "variants" / "brca1_findlay2018"
    if not p.is_dir():
        pytest.skip(f"BRCA1 task not found at {p}")
    return str(p)


def test_classification_task_with_only_embed_matches_sklearn():
    task = geneb.load_task("syn_promoter_tata")
    assert isinstance(task, ClassificationTask) and isinstance(task, Task)
    assert task.split("train").labels.dtype == np.int64  # today's Task interface still works
    seqs, y = task.train_data()
    assert len(seqs) == task.attributes()["n_train"] and y.dtype == np.int64
    res = task.evaluate(OnlyEmbed())
    m = OnlyEmbed()
    te = task.split("test")
    clf = LogisticRegression(C=1.0, tol=1e-10, max_iter=10_000).fit(m.embed(seqs), y)
    pred = clf.predict(m.embed(te.sequences))
    assert res["mcc"] == pytest.approx(matthews_corrcoef(te.labels, pred), abs=1e-9)
    assert res["accuracy"] == pytest.approx(accuracy_score(te.labels, pred), abs=1e-9)
    assert res["auroc"] == pytest.approx(
        roc_auc_score(te.labels, clf.predict_proba(m.embed(te.sequences))[:, 1]), abs=1e-6)
    assert set(res["skipped"]) == {"predict", "log_likelihood", "masked_log_probs"}
    assert "no predict" in res["skipped"]["predict"]


def test_genebs_own_embedders_satisfy_the_interface():
    task = geneb.load_task("syn_promoter_tata")
    res = task.evaluate(geneb.get_embedder("kmer-2"))
    assert -1 <= res["mcc"] <= 1 and "embed" not in res["skipped"]


def test_predict_only_model():
    task = geneb.load_task("syn_promoter_tata")
    te = task.split("test")

    class Oracle:
        def predict(self, seqs):
            return te.labels  # a perfect classifier of the test split

    res = task.evaluate(Oracle())
    assert res["predict_mcc"] == 1.0 and "mcc" not in res and "embed" in res["skipped"]


def test_regression_task_with_only_embed_matches_sklearn(tmp_path):
    rng = np.random.default_rng(0)
    for split, n in (("train", 150), ("test", 60)):
        seqs = ["".join(rng.choice(list("ACGT"), 50)) for _ in range(n)]
        y = [s.count("CG") + 0.3 * rng.normal() for s in seqs]
        pd.DataFrame({"sequence": seqs, "label": y}).to_csv(tmp_path / f"{split}.csv",
                                                           index=False)
    (tmp_path / "task.json").write_text(json.dumps({"kind": "regression"}))
    task = geneb.load_task(tmp_path)
    assert isinstance(task, RegressionTask) and task.attributes()["kind"] == "regression"
    res = task.evaluate(OnlyEmbed(), alpha=0.1)
    seqs, y = task.train_data()
    te = task.split("test")
    pred = Ridge(alpha=0.1).fit(OnlyEmbed().embed(seqs), y).predict(OnlyEmbed().embed(
        te.sequences))
    assert res["spearman"] == pytest.approx(stats.spearmanr(pred, te.labels).statistic,
                                            abs=1e-9)
    assert res["pearson"] == pytest.approx(stats.pearsonr(pred, te.labels).statistic, abs=1e-9)
    assert "mcc" not in res


def test_zero_shot_variant_task_each_method(brca1):
    from geneb.tasks.windows import make_windows

    task = geneb.load_task(brca1, window=W)
    assert isinstance(task, ZeroShotVariantTask)
    with pytest.raises(GenebError, match="zero-shot"):
        task.train_data()
    t = task.variants.table
    y = t["label"].to_numpy()
    # windows by the documented rule (SNVs: the base at W//2 replaced), from the FASTA itself
    lines = Path(brca1, "reference.fa").read_text().split("\n")
    start = int(lines[0].split()[0].split(":")[1].split("-")[0])
    seq = "".join(x.strip() for x in lines[1:])
    refs = [seq[p - start - W // 2 : p - start + W // 2] for p in t["pos"]]
    alts = [r[: W // 2] + a + r[W // 2 + 1 :] for r, a in zip(refs, t["alt"], strict=True)]
    assert make_windows(task.variants, W).ref_windows[0] in refs

    res = task.evaluate(Projection())
    er, ea = Projection().embed(refs), Projection().embed(alts)
    cos = 1 - (er * ea).sum(1) / np.linalg.norm(er, axis=1) / np.linalg.norm(ea, axis=1)
    assert res["cosine_auroc"] == pytest.approx(roc_auc_score(y, cos), abs=1e-9)
    assert res["cosine_auprc"] == pytest.approx(average_precision_score(y, cos), abs=1e-9)
    l2 = np.linalg.norm(er - ea, axis=1)
    assert res["l2_auroc"] == pytest.approx(roc_auc_score(y, l2), abs=1e-9)
    assert set(res["skipped"]) == {"log_likelihood", "masked_log_probs", "predict"}

    res = task.evaluate(OnlyLikelihood())
    m = OnlyLikelihood()
    llr = m.log_likelihood(alts) - m.log_likelihood(refs)
    assert res["llr_auroc"] == pytest.approx(_mann_whitney(y, -llr), abs=1e-9)
    assert "cosine_auroc" not in res and "embed" in res["skipped"]

    res = task.evaluate(OnlyMasked())
    lp = OnlyMasked().masked_log_probs(refs, [W // 2] * len(refs))
    code = {b: i for i, b in enumerate("ACGT")}
    rows = np.arange(len(refs))
    mllr = lp[rows, t["alt"].map(code)] - lp[rows, t["ref"].map(code)]
    assert res["masked_llr_auroc"] == pytest.approx(roc_auc_score(y, -mllr), abs=1e-9)
    assert res["masked_llr_n_scored"] == len(t)


def test_supervised_variant_task(brca1):
    task = geneb.load_task(brca1, window=W, supervised=True)
    assert isinstance(task, SupervisedVariantTask)
    pairs, y = task.train_data()
    assert len(pairs) == len(y) == 3893 and len(pairs[0][0]) == len(pairs[0][1]) == W
    res = task.evaluate(OnlyEmbed(), Cs=[1.0])
    assert 0 <= res["auroc"] <= 1 and 0 <= res["auprc"] <= 1
    assert "log_likelihood" in res["skipped"]
    with pytest.raises(GenebError, match="supervised=True applies to variant folders"):
        geneb.load_task("syn_promoter_tata", supervised=True)


def test_evaluate_of_a_task_made_without_load_task():
    """Task.evaluate takes its evaluator from geneb.evaluation (above probe and vep): a task
    built through geneb.tasks alone says how to get one, and evaluates once it is imported."""
    import subprocess
    import sys

    code = (
        "from geneb.tasks import build_synthetic_task\n"
        "class M:\n"
        "    def embed(self, seqs): return [[s.count(b) for b in 'ACGT'] for s in seqs]\n"
        "t = build_synthetic_task('syn_promoter_tata')\n"
        "try:\n"
        "    t.evaluate(M())\n"
        "except ValueError as e:\n"
        "    print('refused:', e)\n"
        "import geneb.evaluation\n"
        "print('mcc' in t.evaluate(M()))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.strip().splitlines()
    assert first.startswith("refused:") and "geneb.load_task" in first
    assert second == "True"
