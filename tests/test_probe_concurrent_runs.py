"""Two probe runs writing one results table at the same time lose nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from geneb.probe.testing import gaussian_task
from geneb.results.table import read_results
from geneb.store import FeatureStore


@pytest.mark.slow
def test_two_concurrent_runs_on_one_table_keep_every_cell(tmp_path):
    fs = FeatureStore(tmp_path / "store", "a")
    tasks = [f"t{i}" for i in range(6)]
    for i, t in enumerate(tasks):
        gaussian_task(fs, "m", t, n_train=60, n_test=30, dim=6, seed=i)
    out = tmp_path / "r.parquet"

    def launch(my_tasks: list[str]) -> subprocess.Popen:
        args = ["--store", str(fs.path), "--out", str(out), "--shots", "1,full",
                "--seeds", "13,17", "--C", "0.1,1", "--workers", "1", "--backend", "fast"]
        for t in my_tasks:
            args += ["--task", t]
        return subprocess.Popen([sys.executable, "-m", "geneb", "probe", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    procs = [launch(tasks[0::2]), launch(tasks[1::2])]
    for p in procs:
        output, _ = p.communicate(timeout=300)
        assert p.returncode == 0, output
    res = read_results(out)
    assert sorted(res["task"].unique()) == tasks
    assert len(res) == len(tasks) * 2 * 2 * 2  # tasks x regimes x seeds x C
    assert not res.duplicated(["task", "regime", "seed", "C"]).any()
