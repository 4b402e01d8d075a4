"""`geneb run` end to end on the REAL HyenaDNA checkpoint (its own code, trusted in the plan).

Three real tasks: dhs_idhs_fflg (50-300 bp), methyl_4mc_c_equisetifolia (41 bp) and the
first rows of lncrna_ath_prelnc (201-16593 bp, so some rows exceed the 1,026-token context).
extract -> probe -> report, then the same plan without trust (or with a string for it) is
refused before anything is written.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.store import FeatureStore

pytest.importorskip("transformers")

HYENA = "real/hyenadna-tiny-1k-anticapt"
NAME = "hyenadna-tiny-1k"


def capped_task(data_dir: Path, name: str, per_class: int, out: Path) -> Path:
    """A task folder with the first ``per_class`` rows of each class of both splits."""
    d = out / f"{name}_capped"
    d.mkdir(parents=True)
    meta = json.loads((data_dir / name / "task.json").read_text())
    for split in ("train", "test"):
        with open(data_dir / name / f"{split}.csv", newline="") as f:
            every = list(csv.DictReader(f))
        labels = sorted({r["label"] for r in every})
        rows = [r for lab in labels for r in [x for x in every if x["label"] == lab][:per_class]]
        with open(d / f"{split}.csv", "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["sequence", "label"])
            w.writerows((r["sequence"], r["label"]) for r in rows)
    spec = {"name": d.name, "category": meta["category"], "n_classes": meta["n_classes"]}
    (d / "task.json").write_text(json.dumps(spec))
    return d


def plan_text(model: Path, folders: list[Path], trust: str) -> str:
    quoted = ", ".join(f'"{f}"' for f in folders)
    return f"""
store = "store.zarr"
out = "out"

[[models]]
model = "{model}"
name = "{NAME}"
trust_remote_code = {trust}

[tasks]
folders = [{quoted}]

[probe]
shots = ["10", "full"]
seeds = [13]
C = [1.0]
probes = ["linear"]
backend = "fast"
workers = 1
standardize = true
"""


@pytest.mark.slow
def test_plan_with_real_hyenadna_end_to_end(
    models_dir: Path, data_dir: Path, tmp_path: Path
) -> None:
    model = models_dir / HYENA
    lnc = capped_task(data_dir, "lncrna_ath_prelnc", 10, tmp_path / "tasks")
    folders = [data_dir / "dhs_idhs_fflg", data_dir / "methyl_4mc_c_equisetifolia", lnc]
    plan = tmp_path / "plan.toml"

    # without trust, or with a string for it: refused, nothing written
    for trust in ("false", '"true"'):
        plan.write_text(plan_text(model, folders, trust))
        r = CliRunner().invoke(app, ["run", str(plan)])
        assert r.exit_code == 2, r.output
        assert "trust_remote_code" in r.output or "--trust-remote-code" in r.output
        assert "Traceback" not in r.output
        assert not (tmp_path / "store.zarr").exists()

    plan.write_text(plan_text(model, folders, "true"))
    r = CliRunner().invoke(app, ["run", str(plan)])
    assert r.exit_code == 0, r.output
    fs = FeatureStore(tmp_path / "store.zarr")
    assert len(fs.keys(complete_only=True)) == 6
    tasks = ["dhs_idhs_fflg", "methyl_4mc_c_equisetifolia", lnc.name]
    for t in tasks:
        e = fs.get(NAME, t, "test")
        assert e.embeddings.shape[1] == 128
        extra = e.provenance.extra
        assert extra["batch_invariance"]["mode"] == "padded"
        assert extra["batch_invariance"]["padding_side"] == "right"
        assert extra["trust_remote_code"] is True and extra["remote_code"]
    assert fs.get(NAME, lnc.name, "test").provenance.extra["long_sequences"]["truncated_rows"] > 0
    res = pd.read_parquet(tmp_path / "out" / "results.parquet")
    assert set(res["task"]) == set(tasks) and set(res["model"]) == {NAME}
    assert res["converged"].all()
    report = tmp_path / "out" / "report" / "index.html"
    assert report.is_file() and NAME in report.read_text()
