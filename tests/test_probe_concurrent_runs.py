"""Two probe runs writing one results table at the same time lose nothing.

The runs are forced to overlap: each enters its first write of result rows, marks that with a
file, and waits (inside the write) until the other run has marked its own, so both writers
are inside ``geneb.results.parts.append_part`` at the same moment, whatever the scheduling.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from probe_stores import gaussian_task

from geneb.results.table import read_results
from geneb.store import FeatureStore

# `python -c` body: wrap append_part with a two-party file barrier, then run the CLI
AT_ONCE = """
import sys, time, pathlib
from geneb.results import parts
me, other = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
real = parts.append_part
def at_once(p, table, migrate):
    if table.num_rows and not me.exists():
        me.touch()
        deadline = time.monotonic() + 120
        while not other.exists():
            if time.monotonic() > deadline:
                sys.exit("the other run never reached its write")
            time.sleep(0.01)
    return real(p, table, migrate)
parts.append_part = at_once
sys.argv = ["geneb", *sys.argv[3:]]
from geneb.cli import main
main()
"""


@pytest.mark.slow
def test_two_concurrent_runs_on_one_table_keep_every_cell(tmp_path):
    fs = FeatureStore(tmp_path / "store", "a")
    tasks = [f"t{i}" for i in range(6)]
    for i, t in enumerate(tasks):
        gaussian_task(fs, "m", t, n_train=60, n_test=30, dim=6, seed=i)
    out = tmp_path / "r.parquet"

    def launch(my_tasks: list[str], me: str, other: str) -> subprocess.Popen:
        args = ["--store", str(fs.path), "--results", str(out), "--shots", "1,full",
                "--seeds", "13,17", "--C", "0.1,1", "--workers", "1", "--backend", "fast"]
        for t in my_tasks:
            args += ["--task", t]
        marks = [str(tmp_path / me), str(tmp_path / other)]
        return subprocess.Popen([sys.executable, "-c", AT_ONCE, *marks, "probe", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    procs = [launch(tasks[0::2], "a", "b"), launch(tasks[1::2], "b", "a")]
    for p in procs:
        output, _ = p.communicate(timeout=300)
        assert p.returncode == 0, output
    assert (tmp_path / "a").exists() and (tmp_path / "b").exists()  # both met in the write
    res = read_results(out)
    assert sorted(res["task"].unique()) == tasks
    assert len(res) == len(tasks) * 2 * 2 * 2  # tasks x regimes x seeds x C
    assert not res.duplicated(["task", "regime", "seed", "C"]).any()
