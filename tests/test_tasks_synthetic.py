"""The synthetic starter suite: deterministic, labelled synthetic, and carrying learnable signal."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression

from geneb.errors import TaskError, UnknownNameError
from geneb.tasks import synthetic
from geneb.tasks.spec import CATEGORIES
from geneb.tasks.synthetic import SYNTHETIC_TASK_NAMES, build_synthetic_task

NAMES = SYNTHETIC_TASK_NAMES


def fresh(name: str, **kw):
    return build_synthetic_task(name, **kw)


def test_suite_has_four_to_six_named_tasks() -> None:
    assert 4 <= len(NAMES) <= 6
    assert all(n.startswith("syn_") for n in NAMES)
    assert any(synthetic.synthetic_spec(n).n_classes > 2 for n in NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_and_labelled_synthetic(name: str) -> None:
    a = fresh(name, n_train=200, n_test=90)
    b = fresh(name, n_train=200, n_test=90)
    assert a is not b
    assert a.fingerprints() == b.fingerprints()
    spec = a.spec
    assert spec.synthetic and spec.name == name and spec.category in CATEGORIES
    assert "not real data" in spec.source and "not real data" in spec.description
    assert a.metadata["synthetic"] is True
    for split, n in (("train", 200), ("test", 90)):
        data = a.split(split)
        assert len(data) == n and data.labels.dtype == np.int64
        np.testing.assert_array_equal(data.rows, np.arange(n))
        assert set(np.unique(data.labels)) == set(range(spec.n_classes))
        assert all(100 <= len(s) <= 300 for s in data.sequences)
        assert set("".join(data.sequences)) <= set("ACGT")
        # the recorded fingerprint is the documented sha256, recomputed here
        h = hashlib.sha256()
        for s, lab in zip(data.sequences, data.labels.tolist(), strict=True):
            h.update(f"{s}\t{lab}\n".encode())
        assert data.fingerprint == "sha256:" + h.hexdigest()


def test_default_size_is_a_few_thousand_and_test_split_independent_of_n_train() -> None:
    task = fresh("syn_tf_ctcf")
    total = sum(len(d) for d in task.splits.values())
    assert 2000 <= total <= 5000
    small = fresh("syn_tf_ctcf", n_train=100, n_test=600)
    assert small.split("test").fingerprint == task.split("test").fingerprint
    assert small.split("train").fingerprint != task.split("train").fingerprint


def test_label_noise_is_recorded_and_small() -> None:
    task = fresh("syn_promoter_tata", n_train=1000, n_test=200)
    assert task.metadata["labels_flipped"] == {"train": 30, "test": 6}
    counts = np.bincount(task.split("train").labels)
    assert abs(counts[0] - counts[1]) <= 2 * 30


def test_sizes_too_small_and_unknown_names_are_errors() -> None:
    with pytest.raises(TaskError, match="too small"):
        build_synthetic_task("syn_splice_sites", n_train=5, n_test=50)
    with pytest.raises(UnknownNameError, match="syn_tf_ctcf"):
        build_synthetic_task("syn_tf_ctfc")


def test_train_row_cap_applies_to_synthetic_tasks() -> None:
    task = fresh("syn_cpg_island", n_train=400, n_test=50, train_row_cap=100)
    assert len(task.split("train")) == 100
    assert task.metadata["subsampled"]["train"]["original_rows"] == 400


def kmer_accuracy(task, k: int = 4) -> float:
    vec = CountVectorizer(analyzer="char", ngram_range=(k, k), lowercase=False)
    x_train = vec.fit_transform(task.split("train").sequences)
    x_test = vec.transform(task.split("test").sequences)
    clf = LogisticRegression(C=0.1, max_iter=2000).fit(x_train, task.split("train").labels)
    return float((clf.predict(x_test) == task.split("test").labels).mean())


@pytest.mark.parametrize("name", NAMES)
def test_learnable_by_kmer_logistic_regression_but_not_trivial(name: str) -> None:
    task = build_synthetic_task(name, n_train=1600, n_test=600)
    acc = kmer_accuracy(task)
    k = task.spec.n_classes
    n = len(task.split("test"))
    # clearly above the majority-class rate, by an exact binomial test
    chance = np.bincount(task.split("test").labels).max() / n
    assert acc > chance + 0.08, f"{name}: accuracy {acc:.3f} vs chance {chance:.3f}"
    assert binomtest(round(acc * n), n, chance, alternative="greater").pvalue < 1e-6
    # and not solved: label noise alone caps accuracy near 0.97, the decoys lower it further
    assert acc < 0.97, f"{name}: accuracy {acc:.3f} (k={k}) leaves no room between models"


def test_planted_signals_are_where_the_docs_say() -> None:
    tata = build_synthetic_task("syn_promoter_tata", n_train=1000, n_test=100).split("train")
    box = re.compile("TATA[AT]A")
    near_tss = np.array([bool(box.search(s[150:185])) for s in tata.sequences])
    frac = [near_tss[tata.labels == c].mean() for c in (0, 1)]
    assert frac[1] > 0.6 and frac[0] < 0.15, frac

    splice = build_synthetic_task("syn_splice_sites", n_train=900, n_test=90).split("train")
    names = synthetic.synthetic_spec("syn_splice_sites").label_names
    gt_at_site = np.array([("GT" in s[92:106]) for s in splice.sequences])
    donor, neither = names.index("donor"), names.index("neither")
    assert gt_at_site[splice.labels == donor].mean() > 0.9
    acceptor = names.index("acceptor")
    pyr = np.array([sum(c in "CT" for c in s[80:96]) / 16 for s in splice.sequences])
    assert pyr[splice.labels == acceptor].mean() > pyr[splice.labels == neither].mean() + 0.15

    cpg = build_synthetic_task("syn_cpg_island", n_train=600, n_test=60).split("train")
    ratio = np.array([s.count("CG") / len(s) for s in cpg.sequences])
    assert ratio[cpg.labels == 1].mean() > 2 * ratio[cpg.labels == 0].mean()
