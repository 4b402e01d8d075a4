"""`geneb run` with a [vep] table: variant tasks scored by the plan's models, report section."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import PlanError
from geneb.pipeline.plan import load_plan

runner = CliRunner()


def plan_text(data_dir: Path, vep: str) -> str:
    return f"""
store = "store.zarr"
out = "out"

[[models]]
model = "kmer-2"

[tasks]
folders = ["{data_dir / 'dhs_idhs_fflg'}"]

[probe]
shots = ["full"]
seeds = [13]
C = [1.0]
backend = "fast"
workers = 1

[vep]
{vep}
"""


@pytest.fixture()
def brca1(data_dir: Path) -> Path:
    p = data_dir.parent / "variants" / "brca1_findlay2018"
    if not p.is_dir():
        pytest.skip("BRCA1 task not available")
    return p


def test_plan_scores_variants_and_reports(tmp_path, data_dir, brca1):
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(data_dir, f'tasks = ["{brca1}"]\nwindow = 64\nlimit = 30'))
    r = runner.invoke(app, ["run", str(plan)])
    assert r.exit_code == 0, r.output
    text = " ".join(r.output.split())
    assert "llr skipped" in text  # k-mers have no language-model head
    df = pd.read_parquet(tmp_path / "out" / "vep" / "brca1_findlay2018__kmer-2__w64.parquet")
    assert sorted(df["scorer"].unique()) == ["cosine", "l2"] and len(df) == 60
    page = (tmp_path / "out" / "report" / "index.html").read_text()
    assert "Variant effects (zero-shot)" in page and "kmer-2" in page
    m = pd.read_csv(tmp_path / "out" / "report" / "tables" / "vep_metrics.csv")
    assert len(m) == 2 and (m["n_scored"] == 30).all()


@pytest.mark.parametrize(
    ("vep", "msg"),
    [
        ('tasks = ["nope"]', "variant task folder .* does not exist"),
        ('tasks = ["{b}"]\nwindow = 63', "vep.window must be an even integer"),
        ('tasks = ["{b}"]\nscorers = ["cos"]',
         r"\[vep\] scorers\[0\]: expected one of 'cosine', 'l2', 'llr'"),
        ('tasks = ["{b}"]\nwindw = 64', "unknown key 'windw' in \\[vep\\]. Did you mean 'window'"),
    ],
)
def test_bad_vep_tables(tmp_path, data_dir, brca1, vep, msg):
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(data_dir, vep.replace("{b}", str(brca1))))
    with pytest.raises(PlanError, match=msg):
        load_plan(plan)


def test_bad_variant_task_fails_before_any_work(tmp_path, data_dir):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "reference.fa").write_text(">chrT\nACGTACGTAC\n")
    (bad / "variants.csv").write_text("chrom,pos,ref,alt,label\nchrT,3,T,A,1\n")
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(data_dir, f'tasks = ["{bad}"]'))
    r = runner.invoke(app, ["run", str(plan)])
    assert r.exit_code == 2 and "ref 'T' does not match" in " ".join(r.output.split())
    assert not (tmp_path / "store.zarr").exists()


def test_plan_runs_the_supervised_probe_beside_zero_shot(tmp_path, data_dir, brca1):
    """``probe = ["diff"]`` in [vep]: the same table ``geneb vep probe`` writes for the same
    task, model, window and folds, and the report shows it beside the zero-shot scorers."""
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(data_dir, f'tasks = ["{brca1}"]\nwindow = 64\nscorers = ["l2"]\n'
                                        'probe = ["diff"]\nfolds = 5'))
    r = runner.invoke(app, ["run", str(plan)])
    assert r.exit_code == 0, r.output
    got = pd.read_parquet(tmp_path / "out" / "vep"
                          / "brca1_findlay2018__kmer-2__w64__probe.parquet")
    direct = tmp_path / "direct.parquet"
    r = runner.invoke(app, ["vep", "probe", "--task", str(brca1), "--model", "kmer-2",
                            "--window", "64", "--features", "diff", "--folds", "5",
                            "--out", str(direct)])
    assert r.exit_code == 0, r.output
    want = pd.read_parquet(direct)
    cols = ["chrom", "pos", "ref", "alt", "label", "fold", "C", "score", "status"]
    pd.testing.assert_frame_equal(got[cols], want[cols])
    assert got["fold"].nunique() == 5 and (got["status"] == "ok").all()
    m = pd.read_csv(tmp_path / "out" / "report" / "tables" / "vep_metrics.csv")
    assert sorted(m["scorer"]) == ["l2", "probe-diff"]


def test_plan_probe_that_cannot_fold_fails_before_any_work(tmp_path, data_dir, brca1):
    """300 adjacent variants at window 64 form one block: 5 folds are refused up front."""
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(data_dir, f'tasks = ["{brca1}"]\nwindow = 64\nlimit = 300\n'
                                        'probe = ["diff"]\nfolds = 5'))
    r = runner.invoke(app, ["run", str(plan)])
    assert r.exit_code == 2 and "fewer than the 5 folds" in " ".join(r.output.split())
    assert not (tmp_path / "store.zarr").exists() and not (tmp_path / "out").exists()


def test_plan_probe_feature_names_are_checked(tmp_path, data_dir, brca1):
    plan = tmp_path / "plan.toml"
    plan.write_text(plan_text(data_dir, f'tasks = ["{brca1}"]\nprobe = ["dif"]'))
    with pytest.raises(PlanError, match=r"\[vep\] probe\[0\]: expected one of 'diff', 'concat'"):
        load_plan(plan)
