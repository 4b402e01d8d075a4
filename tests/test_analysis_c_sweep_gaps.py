"""Issue 19 case 4: C values are compared on the same tasks, and missing cells are named.

With the C = 1000 cells of one (hard) task missing, the C-sensitivity tables averaged C = 1000
over the two easy tasks present and called it the best C. References are hand computations
from the rows below (one category per task: macro-MCC = mean of the per-task means).
"""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from geneb.analysis.performance import performance_matrix
from geneb.analysis.regularization import c_sweep_gaps, macro_by_c, mcc_range_over_c
from geneb.analysis.table import load_results

MODELS = ("m1", "m2", "m3")
#: per-task base MCC; C = 1 is best on every task, C = 1000 0.05 worse, C = 0.1 0.1 worse
TASKS = {"easy_a": 0.8, "easy_b": 0.75, "hard": 0.2}
SHIFT = {0.1: -0.1, 1.0: 0.0, 1000.0: -0.05}


def _results(missing=(("m1", "hard", 1000.0),)) -> pd.DataFrame:
    rows = []
    for (mi, m), (task, base), (C, shift), seed in itertools.product(
            enumerate(MODELS), TASKS.items(), SHIFT.items(), (13, 17)):
        if (m, task, C) in missing:
            continue
        rows.append(dict(model=m, task=task, category=f"cat_{task}", regime="full", k=None,
                         seed=seed, C=C, probe="linear", standardize=True,
                         mcc=base + shift + 0.01 * mi + (0.002 if seed == 17 else 0.0)))
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def perf():
    return performance_matrix(load_results(_results()))


def test_c_values_are_compared_on_the_same_tasks(perf):
    by_c = macro_by_c(perf)
    assert set(by_c["n_tasks"]) == {2}  # 'hard' lacks m1 at C=1000: left out at every C
    for mi, m in enumerate(MODELS):
        for C, shift in SHIFT.items():
            want = sum(TASKS[t] + shift + 0.01 * mi + 0.001 for t in ("easy_a", "easy_b")) / 2
            got = by_c[(by_c["model"] == m) & (by_c["C"] == C)]["macro_mcc"].item()
            assert got == pytest.approx(want)
    best = mcc_range_over_c(by_c).set_index("model")["best_C"]
    assert (best == 1.0).all()  # before: m1's C=1000 averaged the easy tasks only -> "best"


def test_missing_cells_are_named(perf):
    gaps = c_sweep_gaps(perf)
    assert gaps[["regime", "task", "n_missing", "missing"]].values.tolist() == [
        ["full", "hard", 1, "m1 at C=1000"]]
    complete = performance_matrix(load_results(_results(missing=())))
    assert c_sweep_gaps(complete).empty
    assert set(macro_by_c(complete)["n_tasks"]) == {3}


def test_the_report_page_warns(tmp_path):
    from geneb.analysis.report import build_report

    index = build_report(_results(), tmp_path / "report", n_boot=100)
    html = index.read_text()
    assert "compared without them" in html and "hard (regime full: m1 at C=1000)" in html
    gaps = pd.read_csv(tmp_path / "report" / "tables" / "c_sweep_gaps.csv")
    assert gaps["task"].tolist() == ["hard"]
    table = pd.read_csv(tmp_path / "report" / "tables" / "c_macro_mcc.csv")
    assert set(table["n_tasks"]) == {2}
