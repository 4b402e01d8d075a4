"""Progress on long commands (issue 28, case 26): on a terminal a bar on stderr, also on a
pseudo-terminal that reports no size (where a bare tqdm draws nothing) and redrawn while one
long step runs; nothing when not a terminal or in CI. Commands run in a fresh process on a
pseudo-terminal opened here (tests/terminal.py), as a user's shell runs them. The demo's
progress is checked by its own test (test_demo.py), on the same one run as its outputs.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from probe_stores import gaussian_task
from terminal import environment, run_on_terminal

from geneb.store import FeatureStore


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tty") / "store"
    gaussian_task(FeatureStore(path, "a"), "m", "t", n_train=900, n_test=200, n_classes=3,
                  dim=16, sep=0.8)  # fmt: skip
    return path


@pytest.mark.slow  # three fresh processes, each a few MLP fits: ~40 s
def test_mlp_probe_shows_a_ticking_bar_on_a_terminal_only(store: Path, tmp_path: Path) -> None:
    args = ["probe", "--store", str(store), "--probe", "mlp", "--shots", "10,full",
            "--seeds", "13,17"]  # fmt: skip
    code, out = run_on_terminal([*args, "--results", str(tmp_path / "a")], environment())
    assert code == 0, out
    assert "probing (mlp)" in out and "/4" in out and "m / t" in out, out
    assert out.count("probing (mlp)") >= 3, out  # redrawn while the one pair runs
    code, out = run_on_terminal([*args, "--results", str(tmp_path / "b")], environment(CI="true"),
                                columns=120)  # fmt: skip
    assert code == 0 and "probing" not in out and "4 cells" in out, out
    r = subprocess.run([sys.executable, "-m", "geneb", *args, "--results", str(tmp_path / "c")],
                       env=environment(), capture_output=True, text=True, timeout=240)  # fmt: skip
    assert r.returncode == 0 and "probing" not in r.stderr + r.stdout, r.stderr


@pytest.mark.parametrize("columns", [None, 60])
def test_extract_shows_a_bar_on_a_terminal(tmp_path: Path, columns: int | None) -> None:
    args = ["extract", "--store", str(tmp_path / "s"), "--model", "kmer-2", "--task",
            "syn_promoter_tata", "--split", "test"]  # fmt: skip
    code, out = run_on_terminal(args, environment(), columns=columns)
    assert code == 0, out
    assert "kmer-2/syn_promoter_tata/test" in out and "600/600" in out, out
    r = subprocess.run([sys.executable, "-m", "geneb", *args[:2], str(tmp_path / "t"),
                        *args[3:]], env=environment(), capture_output=True, text=True,
                       timeout=240)  # fmt: skip
    assert r.returncode == 0 and "600/600" not in r.stderr, r.stderr
