"""Memory and time of ``geneb probe`` on a task with many classes (issue 19 case 2).

Builds a synthetic task folder (``--classes`` classes, ``--per-class`` train and 2 test rows
per class; each class a random 200-bp prototype, each row the prototype with 15 % of its bases
redrawn), extracts ``kmer-3`` (64 features) into a store, then runs, in a child process
measured with ``getrusage`` (its peak RSS) and a wall clock:

    geneb probe --shots 1,4,full --backend fast --workers 1 [--C ...]

Before issue 19 case 2 the full-data solver kept one (K-1)(d+1) square Hessian per cell:
500 classes x 65 is 32,435 x 32,435 (19.1 GB RSS, not done in 600 s). Now the solver is
chosen by the coefficient count (``geneb.probe.solvers.base.NEWTON_MAX_COEFS``): L-BFGS
beyond it. ``--baseline-classes K`` also runs the same probe with a Hessian forced (the
threshold raised) on a K-class task, in the same process tree, for comparison at a size
where that still fits.

    python benchmarks/probe_many_classes.py --classes 500 --per-class 4 --baseline-classes 130
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def make_task(folder: Path, n_classes: int, per_class: int, seed: int = 0) -> Path:
    """Write train.csv / test.csv of a synthetic many-class task; returns the folder."""
    rng = np.random.default_rng(seed)
    bases = np.array(list("ACGT"))
    protos = rng.integers(0, 4, size=(n_classes, 200))
    folder.mkdir(parents=True, exist_ok=True)
    for split, reps in (("train", per_class), ("test", 2)):
        rows = []
        for c in range(n_classes):
            for _ in range(reps):
                s = protos[c].copy()
                hit = rng.random(200) < 0.15
                s[hit] = rng.integers(0, 4, size=int(hit.sum()))
                rows.append(("".join(bases[s]), c))
        order = rng.permutation(len(rows))
        lines = ["sequence,label"] + [f"{rows[i][0]},{rows[i][1]}" for i in order]
        (folder / f"{split}.csv").write_text("\n".join(lines) + "\n")
    return folder


def run_child(code: str, env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, peak RSS in GiB, output) of ``python -c code`` in a fresh process (the
    child reports its own peak, ``getrusage(RUSAGE_SELF)``, as its last line)."""
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"child failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    *lines, last = r.stdout.strip().splitlines()
    return wall, int(last.removeprefix("RSS_KIB=")) / 2**20, "\n".join(lines)


PROBE = """
import sys
{patch}
from typer.testing import CliRunner
from geneb.cli import app
r = CliRunner().invoke(app, ["probe", "--store", {store!r}, "--out", {out!r}, "--shots",
                             "1,4,full", "--backend", "fast", "--workers", "1", "--C", {C!r}])
print(r.output.strip())
import resource
print("RSS_KIB=%d" % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(r.exit_code)
"""
FORCE_NEWTON = "import geneb.probe.solvers.base as b; b.NEWTON_MAX_COEFS = 10**9"


def measure(tmp: Path, n_classes: int, per_class: int, C: str, force_newton: bool) -> None:
    import geneb

    task = make_task(tmp / f"many_{n_classes}", n_classes, per_class)
    store = tmp / f"s{n_classes}.zarr"
    geneb.extract(str(store), ["kmer-3"], [str(task)])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    code = PROBE.format(patch=FORCE_NEWTON if force_newton else "", store=str(store),
                        out=str(tmp / f"r{n_classes}{'n' if force_newton else ''}.parquet"),
                        C=C)
    wall, rss, out = run_child(code, env)
    from geneb.results.table import read_results

    df = read_results(tmp / f"r{n_classes}{'n' if force_newton else ''}.parquet")
    solver = "Hessian (forced)" if force_newton else "by NEWTON_MAX_COEFS"
    print(f"{n_classes} classes x {per_class * n_classes} train rows, kmer-3, C={C}, "
          f"solver {solver}: {wall:.1f} s wall, peak RSS {rss:.2f} GiB, {len(df)} cells, "
          f"{int(df.converged.sum())} converged, mean MCC by regime "
          f"{df.groupby('regime').mcc.mean().round(3).to_dict()}")
    print("  " + out.splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--classes", type=int, default=500)
    ap.add_argument("--per-class", type=int, default=4)
    ap.add_argument("--C", default="1")
    ap.add_argument("--baseline-classes", type=int, default=0,
                    help="also run a K-class task with a Hessian forced (0: skip)")
    a = ap.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        measure(tmp, a.classes, a.per_class, a.C, force_newton=False)
        if a.baseline_classes:
            measure(tmp, a.baseline_classes, a.per_class, a.C, force_newton=False)
            measure(tmp, a.baseline_classes, a.per_class, a.C, force_newton=True)


if __name__ == "__main__":
    main()
