"""Results bookkeeping at study scale (issue 14.1): a pair's write must not grow with the table.

Part 1, per-pair write time: a table of N existing rows (N = 10k, 100k, 300k; realistic rows:
75 cells per (model, task), k-shot train rows included) is built, then one pair's 75 rows are
added, ``--repeats`` times; the median is reported for

* ``append``: what geneb does now (one new part: ``ResultsTable.append``);
* ``rewrite``: the former scheme, measured in the same process as the baseline (read the whole
  table, merge by cell identity, rewrite it atomically).

Part 2, whole runs: ``run_probes`` over ``--pairs`` small (model, task) pairs (75 cells each,
in-process, fast backend) into an empty table, then over as many other pairs into the table
the first run left (``--pairs`` x 75 rows, 15,000 by default). Target: ratio <= 1.25.

    .venv/bin/python benchmarks/results_scale.py                  # both parts (~2-4 minutes)
    .venv/bin/python benchmarks/results_scale.py --sizes 10000 --pairs 40
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from geneb.results.schema import RESULT_COLUMNS, RESULTS_SCHEMA_VERSION
from geneb.results.table import ResultsTable, merge_tables, rows_to_table

#: helpers only tests and benchmarks use live in tests/ (not in the library): tests/probe_stores.py
_TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))


def pair_rows(model: str, task: str, rng: np.random.Generator) -> list[dict]:
    """The 75 rows of one pair of the standard grid (3 regimes x 5 seeds x 5 Cs)."""
    rows = []
    for regime, k in (("1", 1), ("10", 10), ("full", None)):
        for seed in (13, 17, 42, 123, 997):
            train = [] if k is None else sorted(rng.choice(5000, 2 * k, replace=False).tolist())
            for C in (0.01, 0.1, 1.0, 10.0, 100.0):
                r = {c: None for c in RESULT_COLUMNS}
                r.update(schema_version=RESULTS_SCHEMA_VERSION, model=model, task=task,
                         category="enhancers", task_synthetic=False, regime=regime, k=k,
                         seed=seed, C=C, probe="linear", protocol="converged", backend="fast",
                         standardize=False, take_all=False, mcc=float(rng.uniform(-1, 1)),
                         accuracy=0.5, macro_f1=0.5, auroc=0.5, n_classes=2,
                         n_train=2 * (k or 2500), n_test=1000, n_iter=12, converged=True,
                         fit_seconds=0.01, train_rows=train, n_params=1_000_000,
                         store_fingerprint=f"sha256:{model}{task}", storage_dtype="float32",
                         task_fingerprint=f"tf:{task}", geneb_version="0.1.0",
                         sklearn_version="1.9.1", created="2026-11-30T00:00:00Z")
                rows.append(r)
    return rows


def _rewrite(path: Path, new) -> None:
    """The former bookkeeping: read all, merge, rewrite atomically (baseline)."""
    import os

    import pyarrow.parquet as pq

    merged = merge_tables([ResultsTable(path).read(), new])
    tmp = path.parent / f".{path.name}.tmp"
    pq.write_table(merged, tmp)
    os.replace(tmp, path)


def per_pair_writes(sizes: list[int], repeats: int, work: Path) -> list[dict]:
    rng = np.random.default_rng(0)
    out = []
    for n in sizes:
        n_pairs = n // 75
        base = rows_to_table([r for i in range(n_pairs)
                              for r in pair_rows(f"m{i % 40}", f"t{i // 40}", rng)])
        folder, single = work / f"folder_{n}", work / f"single_{n}.parquet"
        ResultsTable(folder).append(base)  # one compacted part of n rows
        import pyarrow.parquet as pq

        pq.write_table(base, single)
        t_app, t_rw = [], []
        for rep in range(repeats):
            new = rows_to_table(pair_rows("new", f"t{rep}", rng))
            t0 = time.perf_counter()
            ResultsTable(folder).append(new)
            t_app.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            _rewrite(single, new)
            t_rw.append(time.perf_counter() - t0)
        a, r = statistics.median(t_app), statistics.median(t_rw)
        out.append({"existing_rows": base.num_rows, "append_s": a, "rewrite_s": r,
                    "rewrite_over_append": r / a})
        print(f"  {base.num_rows:>7} rows: append {a * 1e3:7.1f} ms   former rewrite "
              f"{r * 1e3:8.1f} ms   ({r / a:.0f}x)", flush=True)
        shutil.rmtree(folder)
        single.unlink()
    return out


def whole_runs(n_pairs: int, work: Path) -> dict:
    from probe_stores import gaussian_task  # tests/probe_stores.py (see _TESTS above)

    from geneb.probe.engine import run_probes
    from geneb.store import FeatureStore

    fs = FeatureStore(work / "store", "a")
    models = [f"m{i}" for i in range(20)]
    n_tasks = -(-2 * n_pairs // len(models))
    tasks = [f"t{i:03d}" for i in range(n_tasks)]
    t0 = time.perf_counter()
    for t_i, task in enumerate(tasks):
        for m_i, model in enumerate(models):
            gaussian_task(fs, model, task, n_train=60, n_test=40, dim=8, seed=t_i * 100 + m_i)
    print(f"  store of {len(models) * len(tasks)} pairs built in "
          f"{time.perf_counter() - t0:.0f} s (not timed)", flush=True)
    first, second = tasks[: n_tasks // 2], tasks[n_tasks // 2:]
    grid = dict(shots="1,10,full", seeds=(13, 17, 42, 123, 997),
                Cs=(0.01, 0.1, 1.0, 10.0, 100.0), workers=1, backend="fast")
    out = work / "results.parquet"
    c0 = time.process_time()
    s1 = run_probes(fs.path, out, models=models, tasks=first, **grid)
    c1 = time.process_time()
    rows_before = ResultsTable(out).read().num_rows
    c2 = time.process_time()
    s2 = run_probes(fs.path, out, models=models, tasks=second, **grid)
    c3 = time.process_time()
    res = {"pairs_per_run": s1.n_pairs, "rows_before_second_run": rows_before,
           "empty_table_s": s1.seconds, "full_table_s": s2.seconds,
           "ratio": s2.seconds / s1.seconds,
           # CPU seconds of this process: on a shared machine the wall ratio also measures
           # how busy the others were during each run
           "empty_table_cpu_s": c1 - c0, "full_table_cpu_s": c3 - c2,
           "cpu_ratio": (c3 - c2) / (c1 - c0),
           "first_timings": s1.timings, "second_timings": s2.timings}
    print(f"  {s1.n_pairs} pairs into an empty table: {s1.seconds:.1f} s ({c1 - c0:.1f} s CPU);"
          f" {s2.n_pairs} pairs into a {rows_before}-row table: {s2.seconds:.1f} s "
          f"({c3 - c2:.1f} s CPU); ratio {res['ratio']:.2f} wall, {res['cpu_ratio']:.2f} CPU "
          f"(target <= 1.25)", flush=True)
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10000,100000,300000")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--skip-runs", action="store_true")
    ap.add_argument("--skip-writes", action="store_true", help="only the whole runs")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="geneb-results-scale-"))
    try:
        report: dict = {}
        if not args.skip_writes:
            print("per-pair write (75 rows), median of", args.repeats, flush=True)
            report["per_pair"] = per_pair_writes([int(s) for s in args.sizes.split(",")],
                                                 args.repeats, work)
        if not args.skip_runs:
            print("whole runs", flush=True)
            report["runs"] = whole_runs(args.pairs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
