"""The converged-vs-paper comparison tables, checked against hand computations and scipy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau

from geneb.analysis.protocols import ALL_TASKS, compare_protocols
from geneb.probe.schema import RESULT_COLUMNS


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
