"""Progress on long commands (issue 28, case 26): on a terminal a bar on stderr, also on a
pseudo-terminal that reports no size (where a bare tqdm draws nothing) and redrawn while one
long step runs; nothing when not a terminal or in CI. Commands run in a fresh process on a
pseudo-terminal opened here (``pty``), as a user's shell runs them.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
from probe_stores import gaussian_task

from geneb.store import FeatureStore


def run_on_terminal(args: list[str], env: dict[str, str], columns: int | None = None,
                    timeout: float = 240) -> tuple[int, str]:  # fmt: skip
    """``geneb args`` with stdin, stdout and stderr on a new pseudo-terminal (of ``columns``
    columns; None: one that reports no size); returns (exit code, everything it printed)."""
    master, slave = pty.openpty()
    if columns is not None:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "geneb", *args], stdin=slave, stdout=slave,
                            stderr=slave, env=env, close_fds=True)  # fmt: skip
    os.close(slave)
    out, t0 = b"", time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 1 << 16)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            out += data
        elif proc.poll() is not None:
            break
    proc.kill() if proc.poll() is None else None
    os.close(master)
    return proc.wait(), out.decode(errors="replace")


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GENEB_NO_PROGRESS")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.update(extra)
    return env


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


@pytest.mark.slow  # the demo at its smallest: ~110 s
def test_demo_shows_progress_and_explains_non_converged_fits(tmp_path: Path) -> None:
    args = ["demo", "--out", str(tmp_path / "d"), "--n-train", "80", "--n-test", "60",
            "--no-minilm"]  # fmt: skip
    code, out = run_on_terminal(args, environment(), timeout=500)
    assert code == 0, out[-2000:]
    assert "seq/s" in out and "probing (linear)" in out and "probing (mlp)" in out
    text = " ".join(out.split())
    if "did not converge" in text:  # the demo's few-row MLP fits: said in one line, explained
        assert "Common for MLP fits on few rows" in text
