"""The probe summary names the cells whose fit did not converge (issue 28, case 27): how many,
in which (model, task) pairs, and where to look; nothing is said when every fit converged.

Which fits stop at their limit is set here (the real fits' results, with ``converged`` turned
off for one seed): the reference is the results table itself, read back with pandas.
"""

from __future__ import annotations

import pandas as pd
import pytest
from probe_stores import gaussian_task
from typer.testing import CliRunner

import geneb.probe.engine as engine
from geneb.cli import app
from geneb.store import FeatureStore


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("conv") / "store"
    fs = FeatureStore(path, "a")
    for m in ("alpha", "beta"):
        for t in ("t1", "t2"):
            gaussian_task(fs, m, t, n_train=200, n_test=60, n_classes=2, dim=6, sep=1.0)
    return str(path)


def probe(store: str, out: str) -> tuple[int, str]:
    args = ["probe", "--store", store, "--results", out, "--shots", "1,10", "--seeds", "13,17,42",
            "--C", "1", "--workers", "1"]  # fmt: skip
    res = CliRunner().invoke(app, args)
    return res.exit_code, " ".join(res.output.split())


def test_non_converged_cells_are_named(store: str, tmp_path, monkeypatch) -> None:
    real = engine.solve_pair

    def stop_some(store_path, model, task, *a, **k):  # noqa: ANN001, ANN002, ANN003
        out = real(store_path, model, task, *a, **k)
        fits = {f.fit_id: f for f in a[2]}
        for r in out:  # seed 17 on alpha's pairs and on beta/t2 stop at the limit
            if fits[r["fit_id"]].seed == 17 and (model == "alpha" or task == "t2"):
                r["converged"] = False
        return out

    monkeypatch.setattr(engine, "solve_pair", stop_some)
    out = tmp_path / "r"
    code, text = probe(store, str(out))
    assert code == 0, text
    table = pd.read_parquet(out)
    bad = table[~table["converged"].astype(bool)].groupby(["model", "task"]).size()
    assert len(bad) == 3 and bad.sum() > 0
    assert f"note: {bad.sum()} of {len(table)} cells did not converge" in text, text
    for (m, t), n in bad.items():
        assert f"{m}/{t} ({n})" in text
    assert "converged = false and n_iter in" in text and str(out) in text.replace(" ", "")


def test_nothing_said_when_every_fit_converged(store: str, tmp_path) -> None:
    code, text = probe(store, str(tmp_path / "ok"))
    assert code == 0 and "did not converge" not in text, text
