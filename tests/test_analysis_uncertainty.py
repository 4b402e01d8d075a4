"""Bootstrap intervals and paired tests against scipy and slow, obvious implementations."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from example_results import EXAMPLE_MODELS, EXAMPLE_TASKS, example_results
from scipy import stats

from geneb.analysis.performance import performance_matrix
from geneb.analysis.table import load_results, select
from geneb.analysis.uncertainty import (
    adjacent_model_tests,
    bootstrap_over_seeds,
    bootstrap_over_tasks,
    holm,
)

B = 500
SEED = 7


@pytest.fixture(scope="module")
def res() -> pd.DataFrame:
    df = load_results(example_results(seeds=(13, 17, 42, 123), Cs=(1.0,), mlp=False, noise=0.08))
    return select(df, probe="linear", C=1.0)


@pytest.fixture(scope="module")
def perf(res) -> pd.DataFrame:
    return performance_matrix(res)


def _matrix(perf: pd.DataFrame, regime: str) -> pd.DataFrame:
    g = perf[perf["regime"] == regime]
    return g.pivot(index="model", columns="task", values="mcc_mean")


def _stratified_draws(m: pd.DataFrame) -> list[list[str]]:
    """Per resample, the task names drawn: within each category (sorted), as many tasks as
    it has, with replacement; categories drawn in order from one default_rng(SEED)."""
    rng = np.random.default_rng(SEED)
    per_cat = []
    for cat in sorted({EXAMPLE_TASKS[t][0] for t in m.columns}):
        tasks = [t for t in m.columns if EXAMPLE_TASKS[t][0] == cat]
        per_cat.append((cat, tasks, rng.integers(0, len(tasks), (B, len(tasks)))))
    return per_cat


def _loop_macro(m: pd.DataFrame, model: str, picks: list[tuple[str, list[str]]]) -> float:
    """Mean over categories of the mean over the category's picked tasks (a plain loop)."""
    return float(np.mean([np.mean([m.loc[model, t] for t in ts]) for _, ts in picks]))


def test_task_bootstrap_single_category_equals_scipy(perf):
    """With one category the stratified draw is scipy's draw: identical percentile CIs."""
    one = perf.assign(category="all")
    boot = bootstrap_over_tasks(one, n_boot=B, seed=SEED)
    for regime in ("1", "full"):
        m = _matrix(perf, regime)
        got = boot[boot["regime"] == regime].set_index("model")
        for model in EXAMPLE_MODELS:
            ref = stats.bootstrap(
                (m.loc[model].to_numpy(),),
                np.mean,
                n_resamples=B,
                method="percentile",
                confidence_level=0.95,
                rng=np.random.default_rng(SEED),
            )
            assert got.loc[model, "ci_low"] == pytest.approx(ref.confidence_interval.low)
            assert got.loc[model, "ci_high"] == pytest.approx(ref.confidence_interval.high)
            assert got.loc[model, "macro_mcc"] == pytest.approx(m.loc[model].mean())
            assert got.loc[model, "ci_low"] < got.loc[model, "ci_high"]


def test_task_bootstrap_stratified_ci_and_ranks_against_loop(perf):
    """Tasks resampled within categories; each resample aggregated as the paper's macro-MCC."""
    boot = bootstrap_over_tasks(perf, n_boot=B, seed=SEED)
    m = _matrix(perf, "10")
    per_cat = _stratified_draws(m)
    ranks: dict[str, list[int]] = {mo: [] for mo in m.index}
    scores: dict[str, list[float]] = {mo: [] for mo in m.index}
    for b in range(B):
        picks = [(c, [tasks[j] for j in draws[b]]) for c, tasks, draws in per_cat]
        macro = {mo: _loop_macro(m, mo, picks) for mo in m.index}
        for mo in m.index:
            scores[mo].append(macro[mo])
            ranks[mo].append(1 + sum(v > macro[mo] for v in macro.values()))
    got = boot[boot["regime"] == "10"].set_index("model")
    for mo in m.index:
        s = pd.Series(ranks[mo], dtype=float)
        assert got.loc[mo, "rank_ci_low"] == pytest.approx(s.quantile(0.025))
        assert got.loc[mo, "rank_ci_high"] == pytest.approx(s.quantile(0.975))
        v = pd.Series(scores[mo])
        assert got.loc[mo, "ci_low"] == pytest.approx(v.quantile(0.025), abs=1e-12)
        assert got.loc[mo, "ci_high"] == pytest.approx(v.quantile(0.975), abs=1e-12)
    cats = {t: EXAMPLE_TASKS[t][0] for t in m.columns}
    observed = pd.Series(
        {mo: _loop_macro(m, mo, [(c, [t for t in m.columns if cats[t] == c])
                                 for c in sorted(set(cats.values()))]) for mo in m.index}
    )
    for mo in m.index:
        assert got.loc[mo, "rank"] == 1 + (observed > observed[mo]).sum()


def test_seed_bootstrap_equals_scipy_paired(res):
    boot = bootstrap_over_seeds(res, n_boot=B, seed=SEED)
    g = res[res["regime"] == "1"]
    got = boot[boot["regime"] == "1"].set_index("model")
    for model in EXAMPLE_MODELS:
        per_task = [
            g[(g["model"] == model) & (g["task"] == t)].sort_values("seed")["mcc"].to_numpy()
            for t in sorted(EXAMPLE_TASKS)
        ]

        def stat(*samples, axis):
            return np.mean([s.mean(axis=axis) for s in samples], axis=0)

        ref = stats.bootstrap(
            tuple(per_task),
            stat,
            paired=True,
            vectorized=True,
            n_resamples=B,
            method="percentile",
            rng=np.random.default_rng(SEED),
        )
        assert got.loc[model, "ci_low"] == pytest.approx(ref.confidence_interval.low)
        assert got.loc[model, "ci_high"] == pytest.approx(ref.confidence_interval.high)
        assert got.loc[model, "n_seeds"] == 4
    full = boot[boot["regime"] == "full"]
    # full-data fits do not depend on the seed: zero-width intervals
    assert np.allclose(full["ci_low"], full["macro_mcc"])
    assert np.allclose(full["ci_high"], full["macro_mcc"])


def _holm_reference(p):
    """Textbook Holm: sort, multiply the i-th smallest by (m - i + 1), enforce monotonicity."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    prev = 0.0
    for step, i in enumerate(order, start=1):
        prev = max(prev, min(1.0, (m - step + 1) * p[i]))
        out[i] = prev
    return out


def test_holm():
    assert holm(np.array([0.01, 0.04, 0.03])) == pytest.approx([0.03, 0.06, 0.06])
    p = np.random.default_rng(1).uniform(0, 0.2, 9)
    assert holm(p) == pytest.approx(_holm_reference(list(p)))


def test_adjacent_wilcoxon_holm(perf):
    tests = adjacent_model_tests(perf, alpha=0.05)
    for regime in ("1", "10", "full"):
        m = _matrix(perf, regime)
        order = m.mean(axis=1).sort_values(ascending=False).index
        got = tests[tests["regime"] == regime].sort_values("rank")
        assert list(got["model"]) == list(order[:-1])
        assert list(got["next_model"]) == list(order[1:])
        ps = [
            stats.wilcoxon(m.loc[a] - m.loc[b]).pvalue
            for a, b in zip(order[:-1], order[1:], strict=True)
        ]
        assert got["p_value"].to_numpy() == pytest.approx(ps)
        adj = _holm_reference(ps)
        assert got["p_holm"].to_numpy() == pytest.approx(adj)
        assert list(got["separable"]) == [a < 0.05 for a in adj]


def test_adjacent_tests_separate_clear_gaps():
    """Twelve tasks, model A better than B by 0.2 everywhere, B and C equal: A>B separable."""
    rows = []
    for t in range(12):
        for model, base in (("A", 0.7), ("B", 0.5), ("C", 0.5)):
            rows.append(
                {
                    "probe": "linear",
                    "standardize": False,
                    "C": 1.0,
                    "regime": "full",
                    "model": model,
                    "task": f"t{t}",
                    "category": "x",
                    "mcc_mean": base + 0.01 * t,
                }
            )
    tests = adjacent_model_tests(pd.DataFrame(rows))
    assert list(tests["model"]) == ["A", "B"]
    assert tests["separable"].tolist() == [True, False]
    assert tests["p_value"].iloc[1] == 1.0  # identical scores: nothing to separate
