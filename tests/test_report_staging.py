"""A report killed mid-build leaves no staging folder for good (issue 28, case 23): SIGTERM and
SIGHUP remove it on the way out (the previous report stays whole), and after a kill -9 the
next report into the same folder removes it; a live report's staging folder is never touched.

The killed reports run in a fresh process whose extra section blocks (so the signal lands
while the staging folder holds files); references are the folder listings before and after.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from example_results import example_results

from geneb.analysis.report import MANIFEST, build_report

N_BOOT = 100
HERE = Path(__file__).resolve().parent

SLOW_REPORT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {here!r})
    import pandas as pd
    from geneb.analysis.report import SECTIONS, build_report

    def slow(page, ctx):
        (page.out / "tables").mkdir(exist_ok=True)
        (page.out / "tables" / "ballast.csv").write_bytes(b"x" * 5_000_000)
        print("staged", flush=True)
        time.sleep(60)

    # one real section's files, then the blocking one's, in the staging folder: which files
    # it holds does not matter to the clean-up (and every section costs seconds)
    build_report(pd.read_parquet({res!r}), {out!r}, n_boot=100, sections=[SECTIONS[1], slow])
""")


def listing(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


@pytest.mark.slow  # a fresh process per signal: ~10 s each
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_a_killed_report_leaves_no_staging(tmp_path: Path, sig: int, built_report) -> None:
    df = example_results(rng_seed=11, mlp=False)
    res = tmp_path / "results.parquet"
    df.to_parquet(res)
    out = built_report(tmp_path / "report", rng_seed=11, mlp=False)  # the previous report
    before = listing(out)
    script = SLOW_REPORT.format(here=str(HERE), res=str(res), out=str(out))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "staged"
    staged = list(out.glob(".geneb-report-staging*"))
    assert len(staged) == 1 and any(staged[0].rglob("*.csv"))
    t0 = time.perf_counter()
    proc.send_signal(sig)
    proc.wait(timeout=30)
    latency = time.perf_counter() - t0
    print(f"{signal.Signals(sig).name}: exited {proc.returncode} after {latency:.3f} s")
    assert latency < 2.0
    report_files = {k: v for k, v in listing(out).items()
                    if not k.startswith(".geneb-report-staging")}  # fmt: skip
    assert report_files == before  # the previous report, whole
    if sig == signal.SIGKILL:
        assert list(out.glob(".geneb-report-staging*")) == staged  # nothing could run ...
        build_report(df, out, n_boot=N_BOOT)  # ... and the next report removes it
    assert not list(out.glob(".geneb-report-staging*"))
    assert (out / MANIFEST).is_file()


def test_the_next_report_removes_dead_reports_staging_only(tmp_path: Path,
                                                           built_report) -> None:
    out = built_report(tmp_path / "r", rng_seed=11, mlp=False)  # the previous report
    host = socket.gethostname()
    dead = out / f".geneb-report-staging.partial-{host}-{dead_pid()}-abc123"
    live = out / f".geneb-report-staging.partial-{host}-{os.getpid()}-def456"
    other_host = out / f".geneb-report-staging.partial-elsewhere-{dead_pid()}-ghi789"
    for d in (dead, live, other_host):
        (d / "tables").mkdir(parents=True)
        (d / "tables" / "t.csv").write_text("a\n1\n")
    build_report(example_results(rng_seed=11, mlp=False), out, n_boot=N_BOOT)
    left = sorted(p.name for p in out.glob(".geneb-report-staging*"))
    assert left == sorted([live.name, other_host.name])
