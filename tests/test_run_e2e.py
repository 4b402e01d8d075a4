"""`geneb run` end to end on real task folders: extract -> probe -> report, then idempotence."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.store import FeatureStore

runner = CliRunner()
TASKS = ("dhs_idhs_fflg", "methyl_4mc_c_equisetifolia", "gue_splice_reconstructed")


def plan_text(data_dir: Path, extra_model: str = "") -> str:
    folders = ", ".join(f'"{data_dir / t}"' for t in TASKS)
    return f"""
store = "store.zarr"
out = "out"

[[models]]
model = "kmer-2"

[[models]]
model = "kmer-3"
{extra_model}
[tasks]
folders = [{folders}]

[probe]
shots = ["1", "10", "full"]
seeds = [13, 17]
C = [0.1, 1.0]
probes = ["linear"]
backend = "fast"
workers = 1
standardize = true
"""


@pytest.mark.slow
def test_plan_runs_end_to_end_and_rerun_computes_nothing(tmp_path, data_dir):
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(data_dir))
    first = runner.invoke(app, ["run", str(plan)])
    assert first.exit_code == 0, first.output
    # store: 2 models x 3 tasks x 2 splits, all complete
    fs = FeatureStore(tmp_path / "store.zarr")
    keys = fs.keys(complete_only=True)
    assert len(keys) == 12
    e = fs.get("kmer-3", "gue_splice_reconstructed", "test")
    assert e.embeddings.shape == (4562, 64)
    # results: 2 models x 3 tasks x 3 regimes x 2 seeds x 2 C
    res = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert len(res) == 2 * 3 * 3 * 2 * 2
    assert set(res["task"]) == set(TASKS)
    assert res["converged"].all()
    report = tmp_path / "out" / "report" / "index.html"
    assert report.is_file() and "kmer-3" in report.read_text()

    dry = runner.invoke(app, ["run", str(plan), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "72 already in the results table, 0 to compute" in dry.output
    assert "extract" in dry.output and "missing" not in dry.output

    again = runner.invoke(app, ["run", str(plan)])
    assert again.exit_code == 0, again.output
    assert "0 entries extracted (12 already there), 0 probe cells computed (72 already" in (
        " ".join(again.output.split())
    )
    assert pd.read_parquet(tmp_path / "out" / "results.parquet").equals(res)


def test_plan_with_a_typo_fails_before_any_work(tmp_path, data_dir):
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(data_dir).replace('model = "kmer-3"', 'model = "kmer-33"'))
    r = runner.invoke(app, ["run", str(plan)])
    assert r.exit_code == 2
    assert "kmer-33" in r.output and "Traceback" not in r.output
    assert not (tmp_path / "store.zarr").exists() and not (tmp_path / "out").exists()

    plan.write_text(plan_text(data_dir).replace("[probe]\nshots", "[probe]\nshotz"))
    r = runner.invoke(app, ["run", str(plan)])
    assert r.exit_code == 2 and "shotz" in r.output and "Did you mean 'shots'" in r.output

    bad_task = plan_text(data_dir).replace(
        "[tasks]\nfolders", '[tasks]\nnames = ["gue_mose_0"]\nfolders'
    )
    plan.write_text(bad_task.replace('model = "kmer-33"', ""))
    r = runner.invoke(app, ["run", str(plan)])
    assert r.exit_code == 2 and "gue_mose_0" in r.output
    assert not (tmp_path / "store.zarr").exists()
