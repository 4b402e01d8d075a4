"""`geneb probe` through typer's CliRunner: options map onto run_probes, errors exit 2."""

from __future__ import annotations

import pytest
from probe_stores import gaussian_task
from typer.testing import CliRunner

from geneb.cli import app
from geneb.results.table import read_results
from geneb.store import FeatureStore


@pytest.fixture()
def store(tmp_path):
    fs = FeatureStore(tmp_path / "store", "a")
    gaussian_task(fs, "org/model-a", "t_bin", n_train=80, n_test=40, dim=8)
    gaussian_task(fs, "org/model-a", "t_tri", n_train=90, n_test=45, n_classes=3, dim=8, seed=3)
    return fs


def _invoke(*args):
    return CliRunner().invoke(app, ["probe", *map(str, args)])


def test_cli_runs_the_requested_grid(store, tmp_path):
    out = tmp_path / "r.parquet"
    r = _invoke("--store", store.path, "--results", out, "--model", "org/model-a", "--task",
                "t_tri", "--shots", "1,full", "--seeds", "13,17,42", "--C", "0.1,1",
                "--C", "10", "--backend", "sklearn", "--workers", "1", "--standardize")
    assert r.exit_code == 0, r.output
    df = read_results(out)
    assert len(df) == 2 * 3 * 3
    assert sorted(df.C.unique()) == [0.1, 1.0, 10.0]
    assert set(df.regime) == {"1", "full"} and set(df.seed) == {13, 17, 42}
    assert df.standardize.all() and (df.model == "org/model-a").all()
    assert "18 cells: 18 computed (12 fits, 1 model x task pairs" in r.output
    r = _invoke("--store", store.path, "--results", out, "--task", "t_tri", "--shots", "1,full",
                "--seeds", "13,17,42", "--C", "0.1,1,10", "--backend", "sklearn",
                "--standardize")
    assert r.exit_code == 0 and "0 computed" in r.output and "18 already done" in r.output


def test_cli_mlp_probe(store, tmp_path):
    out = tmp_path / "r.parquet"
    r = _invoke("--store", store.path, "--results", out, "--task", "t_bin", "--shots", "10",
                "--seeds", "13", "--probe", "mlp")
    assert r.exit_code == 0, r.output
    df = read_results(out)
    assert len(df) == 1 and df.probe.iloc[0] == "mlp" and df.C.isna().all()


@pytest.mark.parametrize(
    "args,msg",
    [
        (["--model", "org/model-b"], "Did you mean 'org/model-a'"),
        (["--task", "t_bi"], "unknown task in the store 't_bi'"),
        (["--shots", "1,many"], "--shots: expected 'full' or a positive int k"),
        (["--C", "-1"], "--C: expected a positive number, got -1"),
        (["--backend", "cuml"], "backend 'cuml' is not usable here"),
        (["--backend", "skl"], "--backend: expected one of"),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "either workers"),
    ],
)
def test_cli_errors_are_clean(store, tmp_path, args, msg):
    out = tmp_path / "r.parquet"
    default = [] if "--backend" in args else ["--backend", "sklearn"]  # given once (repeat rule)
    r = _invoke("--store", store.path, "--results", out, *default, *args)
    assert r.exit_code == 2, r.output
    assert "error:" in r.output and msg in " ".join(r.output.split())
    assert "Traceback" not in r.output
    assert not out.exists()


def test_missing_store_is_clean(tmp_path):
    r = _invoke("--store", tmp_path / "nope", "--results", tmp_path / "r.parquet")
    assert r.exit_code == 2 and "no feature store" in r.output


def test_progress_bar_path(store, tmp_path, capsys):
    from geneb.probe.engine import run_probes

    s = run_probes(store.path, tmp_path / "r.parquet", shots="1", seeds=(13,), backend="sklearn",
                   workers=1, progress=True)
    assert s.n_fits == 2
    assert "2/2" in capsys.readouterr().err
