"""The converged-vs-paper comparison tables, checked against hand computations and scipy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from geneb.analysis.protocols import ALL_TASKS, compare_protocols
from geneb.results.schema import RESULT_COLUMNS


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for m in ("a", "b", "c", "d"):
        for t in ("t1", "t2"):
            for seed in (13, 17):
                base = rng.uniform(-0.5, 0.9)
                for proto, shift in (("converged", 0.0), ("paper", rng.normal(0, 0.05))):
                    r = {c: None for c in RESULT_COLUMNS}
                    r.update(model=m, task=t, category="enhancers", regime="full", seed=seed,
                             C=1.0, probe="linear", protocol=proto, backend="sklearn",
                             standardize=False, mcc=float(np.clip(base + shift, -1, 1)),
                             n_convergence_warnings=1 if proto == "paper" and m == "a" else 0,
                             created="2026-11-30T00:00:00Z")
                    rows.append(r)
    return pd.DataFrame(rows)


def test_cells_summary_and_ranks_match_hand_computation():
    df = _table()
    out = compare_protocols(df)
    cells = out["cells"]
    assert len(cells) == 16
    conv = df[df.protocol == "converged"].set_index(["model", "task", "seed"]).mcc
    pap = df[df.protocol == "paper"].set_index(["model", "task", "seed"]).mcc
    want = (pap - conv).sort_index()
    got = cells.set_index(["model", "task", "seed"]).mcc_diff.sort_index()
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), rtol=0, atol=1e-15)
    s = out["summary"].iloc[0]
    assert s.n_cells == 16 and s.paper_cells_warned == 4
    assert s.max_abs_diff == pytest.approx(want.abs().max())
    ranks = out["ranks"].set_index("task")
    for t in ("t1", "t2"):
        c = conv.xs(t, level="task").groupby("model").mean()
        p = pap.xs(t, level="task").groupby("model").mean()
        assert ranks.loc[t, "kendall_tau"] == pytest.approx(kendalltau(c, p).statistic)
    c = conv.groupby("model").mean()
    p = pap.groupby("model").mean()
    assert ranks.loc[ALL_TASKS, "kendall_tau"] == pytest.approx(kendalltau(c, p).statistic)
    assert ranks.loc[ALL_TASKS, "same_best_model"] == (c.idxmax() == p.idxmax())


def test_one_protocol_only_gives_empty_tables():
    df = _table()
    out = compare_protocols(df[df.protocol == "converged"])
    assert all(t.empty for t in out.values())
    assert "kendall_tau" in out["ranks"].columns


def test_report_keeps_protocols_apart(tmp_path) -> None:
    """A table with converged and paper rows: the headline uses converged rows only (equal to
    a report of the converged rows alone), and a comparison section shows the difference."""
    from example_results import example_results

    from geneb.analysis.report import build_report

    conv = example_results(seeds=(13, 17), Cs=(1.0,), noise=0.05)
    conv["protocol"] = "converged"
    paper = conv.copy()
    paper["protocol"] = "paper"
    paper["mcc"] = (paper["mcc"] - 0.1).clip(-1, 1)  # the paper's setting lands lower here
    root = Path(build_report(pd.concat([conv, paper], ignore_index=True),
                             tmp_path / "both")).parent
    alone = Path(build_report(conv, tmp_path / "alone")).parent
    tables = sorted(p.name for p in (alone / "tables").glob("leaderboard_*.csv"))
    assert tables
    for name in tables:
        pd.testing.assert_frame_equal(pd.read_csv(root / "tables" / name),
                                      pd.read_csv(alone / "tables" / name))
    summary = pd.read_csv(root / "tables" / "protocol_summary.csv")
    np.testing.assert_allclose(summary["mean_abs_diff"], 0.1, atol=1e-9)
    assert "Converged vs paper protocol" in (root / "index.html").read_text()
    assert not (alone / "tables" / "protocol_summary.csv").exists()
