"""The grid runs through an external Dask cluster: `dask scheduler` + two `dask worker`s."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from probe_stores import gaussian_task
from typer.testing import CliRunner

from geneb.cli import app
from geneb.results.table import read_results
from geneb.store import FeatureStore

DASK = Path(sys.executable).parent / "dask"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def cluster(tmp_path):
    if not DASK.exists():
        pytest.skip(f"the dask command is not installed beside {sys.executable}")
    from distributed import Client

    addr = f"tcp://127.0.0.1:{_free_port()}"
    procs: list[subprocess.Popen] = []
    logs = [open(tmp_path / f"dask{i}.log", "w") for i in range(3)]  # noqa: SIM115
    try:
        procs.append(subprocess.Popen(
            [str(DASK), "scheduler", "--host", "127.0.0.1", "--port", addr.rsplit(":", 1)[1],
             "--no-dashboard"], stdout=logs[0], stderr=subprocess.STDOUT))
        for i in (1, 2):
            procs.append(subprocess.Popen(
                [str(DASK), "worker", addr, "--host", "127.0.0.1", "--nworkers", "1",
                 "--nthreads", "1", "--no-dashboard", "--name", f"w{i}"],
                stdout=logs[i], stderr=subprocess.STDOUT))
        deadline = time.time() + 60
        while True:
            try:
                with Client(addr, timeout="5s") as c:
                    c.wait_for_workers(2, timeout=max(1, deadline - time.time()))
                break
            except OSError:
                if time.time() > deadline or any(p.poll() is not None for p in procs):
                    raise
                time.sleep(0.5)
        yield addr
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in reversed(procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for f in logs:
            f.close()


@pytest.mark.slow
def test_grid_through_external_scheduler_matches_in_process(cluster, tmp_path):
    fs = FeatureStore(tmp_path / "store", "a")
    gaussian_task(fs, "m1", "t_bin", n_train=100, n_test=50, dim=10)
    gaussian_task(fs, "m1", "t_tri", n_train=120, n_test=60, n_classes=3, dim=10, seed=1)
    gaussian_task(fs, "m2", "t_bin", n_train=100, n_test=50, dim=10, seed=2)
    out, ref = tmp_path / "dask.parquet", tmp_path / "ref.parquet"
    base = ["probe", "--store", fs.path, "--seeds", "13,17", "--C", "0.1,1", "--backend",
            "sklearn"]
    r = CliRunner().invoke(app, [*base, "--results", str(out), "--scheduler", cluster])
    assert r.exit_code == 0, r.output
    assert "3 model x task pairs" in r.output
    r = CliRunner().invoke(app, [*base, "--results", str(ref), "--workers", "1"])
    assert r.exit_code == 0, r.output
    key = ["model", "task", "regime", "seed", "C"]
    a = read_results(out).sort_values(key).reset_index(drop=True)
    b = read_results(ref).sort_values(key).reset_index(drop=True)
    assert len(a) == 3 * 3 * 2 * 2
    cols = key + ["mcc", "accuracy", "macro_f1", "auroc", "n_iter", "converged"]
    assert a[cols].equals(b[cols])
    # rerunning against the cluster computes nothing
    r = CliRunner().invoke(app, [*base, "--results", str(out), "--scheduler", cluster])
    assert r.exit_code == 0 and "0 computed" in r.output, r.output


def test_unreachable_scheduler_is_a_clear_error(tmp_path, monkeypatch):
    from geneb import cluster

    monkeypatch.setattr(cluster, "SCHEDULER_TIMEOUT", "2s")
    fs = FeatureStore(tmp_path / "store", "a")
    gaussian_task(fs, "m1", "t_bin", n_train=40, n_test=20, dim=4)
    r = CliRunner().invoke(app, ["probe", "--store", fs.path, "--results", str(tmp_path / "r.pq"),
                                 "--backend", "sklearn", "--scheduler",
                                 f"tcp://127.0.0.1:{_free_port()}"])
    assert r.exit_code == 2
    assert "cannot reach the Dask scheduler" in r.output
    assert not (tmp_path / "r.pq").exists()
