"""GENEB's aggregation against hand computations on a fixture of known structure.

Two categories, one with 1 task and one with 3 tasks, two seeds per cell. Per-task MCC (mean
over seeds), by hand:

    model  A:a1   B:b1  B:b2  B:b3 | cat A  cat B | macro = (A+B)/2 | micro = mean of 4 tasks
    m1     0.7    0.1   0.2   0.3  |  0.7   0.2   |  0.45           |  0.325
    m2     0.3    0.4   0.5   0.6  |  0.3   0.5   |  0.40           |  0.45

so macro and micro differ by 0.125 (m1) and -0.05 (m2), and they rank the two models in
opposite orders.
"""

from __future__ import annotations

import pandas as pd
import pytest

from geneb.analysis.aggregates import aggregate_scores
from geneb.analysis.performance import performance_matrix
from geneb.analysis.rankings import model_rankings
from geneb.analysis.table import load_results
from geneb.analysis.uncertainty import adjacent_model_tests, bootstrap_over_tasks
from geneb.protocol import macro_micro

TASK_MCC = {
    "m1": {"a1": 0.7, "b1": 0.1, "b2": 0.2, "b3": 0.3},
    "m2": {"a1": 0.3, "b1": 0.4, "b2": 0.5, "b3": 0.6},
}
CATEGORY = {"a1": "cat_a", "b1": "cat_b", "b2": "cat_b", "b3": "cat_b"}
HAND = {  # model -> (cat_a, cat_b, macro, micro)
    "m1": (0.7, 0.2, 0.45, 0.325),
    "m2": (0.3, 0.5, 0.40, 0.45),
}


def table() -> pd.DataFrame:
    """Two seeds per cell whose mean is the per-task MCC above (+-0.05 around it)."""
    rows = []
    for model, per_task in TASK_MCC.items():
        for task, mcc in per_task.items():
            for seed, delta in ((1, 0.05), (2, -0.05)):
                rows.append(
                    dict(model=model, task=task, category=CATEGORY[task], regime="10",
                         seed=seed, C=1.0, probe="linear", mcc=mcc + delta,
                         n_test={"a1": 1000, "b1": 10, "b2": 10, "b3": 10}[task])
                )
    return load_results(pd.DataFrame(rows))


@pytest.fixture(scope="module")
def agg() -> pd.DataFrame:
    return aggregate_scores(performance_matrix(table()))


def test_overall_macro_is_mean_of_category_means_and_micro_mean_of_tasks(agg):
    ov = agg[agg["scope"] == "overall"].set_index("model")
    for model, (_, _, macro, micro) in HAND.items():
        assert ov.loc[model, "macro_mcc"] == pytest.approx(macro, abs=1e-12)
        assert ov.loc[model, "micro_mcc"] == pytest.approx(micro, abs=1e-12)
        assert ov.loc[model, "n_tasks"] == 4 and ov.loc[model, "n_categories"] == 2
    # the known gap between the paper's macro and the plain mean over tasks
    assert ov.loc["m1", "macro_mcc"] - ov.loc["m1", "micro_mcc"] == pytest.approx(0.125)
    # test-set size plays no part (a1 has 100x the test rows of the others)
    assert "n_test_total" not in agg.columns


def test_category_scores(agg):
    for model, (a, b, _, _) in HAND.items():
        g = agg[agg["model"] == model].set_index("scope")
        assert g.loc["cat_a", "macro_mcc"] == pytest.approx(a, abs=1e-12)
        assert g.loc["cat_b", "macro_mcc"] == pytest.approx(b, abs=1e-12)
        assert g.loc["cat_b", "micro_mcc"] == pytest.approx(b, abs=1e-12)
        assert g.loc["cat_b", "n_tasks"] == 3


def test_macro_micro_helper_matches_hand():
    for model, (_, _, macro, micro) in HAND.items():
        tasks = sorted(TASK_MCC[model])
        got = macro_micro([TASK_MCC[model][t] for t in tasks], [CATEGORY[t] for t in tasks])
        assert got == pytest.approx((macro, micro), abs=1e-12)


def test_rankings_follow_macro(agg):
    ranks = model_rankings(agg)
    ov = ranks[ranks["scope"] == "overall"].set_index("model")
    assert ov.loc["m1", "rank"] == 1 and ov.loc["m2", "rank"] == 2  # micro would say m2


def test_task_bootstrap_keeps_every_category_and_its_weight():
    """cat_a has one task, so every resample keeps a1 with weight 1/2: m1's macro stays in
    [(0.7 + 0.1) / 2, (0.7 + 0.3) / 2] = [0.4, 0.5]; resampling all tasks freely would let it
    fall to 0.1 (all four draws b1)."""
    perf = performance_matrix(table())
    boot = bootstrap_over_tasks(perf, n_boot=400, seed=3).set_index("model")
    assert boot.loc["m1", "macro_mcc"] == pytest.approx(0.45)
    assert 0.4 - 1e-12 <= boot.loc["m1", "ci_low"] < boot.loc["m1", "ci_high"] <= 0.5 + 1e-12
    assert 0.3 / 2 + 0.4 / 2 - 1e-12 <= boot.loc["m2", "ci_low"]
    assert boot.loc["m2", "ci_high"] <= 0.3 / 2 + 0.6 / 2 + 1e-12


def test_adjacent_tests_ordered_by_macro():
    t = adjacent_model_tests(performance_matrix(table()))
    assert list(t["model"]) == ["m1"] and list(t["next_model"]) == ["m2"]
    assert t["macro_mcc"].iloc[0] == pytest.approx(0.45)


def test_report_leaderboard_uses_paper_aggregation(tmp_path):
    from geneb.analysis.report import build_report

    build_report(table(), tmp_path / "r", n_boot=100)
    lb = pd.read_csv(tmp_path / "r" / "tables" / "leaderboard_10.csv").set_index("model")
    assert lb.loc["m1", "rank"] == 1
    assert lb.loc["m1", "macro_mcc"] == pytest.approx(0.45, abs=1e-9)
    assert lb.loc["m2", "micro_mcc"] == pytest.approx(0.45, abs=1e-9)
    html = (tmp_path / "r" / "index.html").read_text()
    assert "mean over categories of the category scores" in html


def test_probe_stability_ranks_models_by_macro():
    """Linear macro order m1 > m2 > m3 equals the MLP order (rho 1); the plain mean over tasks
    would order m2 (0.45) > m1 (0.325) > m3 (0.2875) and give rho 0.5."""
    from geneb.analysis.stability import paired_probe_scores, probe_stability

    linear = {**TASK_MCC, "m3": {"a1": 0.1, "b1": 0.35, "b2": 0.35, "b3": 0.35}}
    mlp = {"m1": 0.9, "m2": 0.8, "m3": 0.7}
    rows = []
    for model, per_task in linear.items():
        for task, mcc in per_task.items():
            for probe, c, v in (("linear", 1.0, mcc), ("mlp", float("nan"), mlp[model])):
                rows.append(dict(model=model, task=task, category=CATEGORY[task], regime="full",
                                 seed=13, C=c, probe=probe, mcc=v))
    res = load_results(pd.DataFrame(rows))
    stab = probe_stability(paired_probe_scores(res, C=1.0)).set_index("statistic")
    assert stab.loc["spearman_model_macro", "value"] == pytest.approx(1.0)


def test_single_task_categories_are_named_beside_the_task_interval(tmp_path):
    """cat_a has one task: the within-category bootstrap cannot vary it, and the report says
    so (a point-like interval must not pass for certainty)."""
    from geneb.analysis.report import build_report

    boot = bootstrap_over_tasks(performance_matrix(table()), n_boot=200, seed=0)
    m1 = boot[boot["model"] == "m1"].iloc[0]
    # only cat_b varies: the interval is the cat_b bootstrap halved around cat_a's 0.7
    assert m1["ci_high"] - m1["ci_low"] <= (0.3 - 0.1) / 2 + 1e-9
    build_report(table(), tmp_path / "r", n_boot=100)
    html = (tmp_path / "r" / "index.html").read_text()
    assert "1 of 2 categories have a single task (cat_a)" in html
