"""The whole GENEB probe grid: geneb (API and CLI) against the naive sklearn loop.

For each task (default gue_mouse_0 and gue_tf_0, kmer-5 spectra, standardised on both sides):

1. extract kmer-5 into a temporary store with geneb's extractor (not timed);
2. geneb through the public API: ``run_probes(..., Cs=0.01..100, standardize=True)``;
3. geneb through the CLI: ``geneb probe ... --standardize`` in a subprocess (start-up included;
   geneb's bytecode compiled first, as a regular install has it); 2 and 3 run --repeats times
   (3), interleaved, each on a fresh results file, and the medians are reported;
4. the naive loop a researcher writes: per cell (3 regimes x seeds x C), ``StandardScaler``
   on the cell's train rows and ``LogisticRegression(C=C, max_iter=1000).fit`` (default tol),
   on the very same rows geneb used (read back from the results table);
5. a tightly converged reference: sklearn float64, tol 1e-10, max_iter 10000, fitted once per
   distinct (rows, C) (full-data fits do not depend on the seed). Cells where the reference
   itself stops before tol are listed.

Prints wall times, naive/geneb ratios and the largest per-cell MCC differences (geneb vs
reference, naive vs reference). Test rows whose classes tie in exact arithmetic (1-shot
standardised k-mer spectra have many) are decided the same way on both sides by snapping
logits within rounding of a tie (``geneb.probe.solvers.fast.snap_ties``); the raw-argmax
reference difference (sklearn's own ``predict``) is printed too. The reference's MCC comes from
``geneb.probe.metrics.compute_metrics`` like geneb's cells, so both share one tie rule.

    .venv/bin/python benchmarks/probe_grid.py                    # both tasks (many minutes)
    .venv/bin/python benchmarks/probe_grid.py --tasks gue_mouse_0 --naive-threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def _default_data_dir() -> str:
    return os.environ.get("GENEB_DATA_DIR") or str(REPO.parent / "shared" / "data")


def _naive_and_reference(X, y, Xte, yte, table, n_classes, naive_threads, do_ref):
    """Naive loop timing and MCCs, plus converged reference MCCs, per results row."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import matthews_corrcoef
    from sklearn.preprocessing import StandardScaler
    from threadpoolctl import threadpool_limits

    from geneb.probe.metrics import compute_metrics
    from geneb.probe.solvers.fast import proba_from_logits

    cells = []
    for r in table.itertuples():
        rows = np.asarray(r.positions, dtype=np.int64)
        cells.append((r.regime, int(r.seed), float(r.C), rows))
    # naive: exactly what a researcher runs, one fit per cell, no dedupe, default tol;
    # timed once per BLAS thread setting (None = the libraries' default)
    naive_s: dict[str, float] = {}
    naive_mcc: list[float] = []
    for threads in naive_threads:
        t0 = time.perf_counter()
        mccs = []
        with threadpool_limits(limits=threads), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for _reg, _seed, C, rows in cells:
                sc = StandardScaler().fit(X[rows])
                m = LogisticRegression(C=C, max_iter=1000).fit(sc.transform(X[rows]), y[rows])
                mccs.append(matthews_corrcoef(yte, m.predict(sc.transform(Xte))))
        naive_s["default" if threads is None else f"{threads}thread"] = time.perf_counter() - t0
        naive_mcc = mccs
    ref_mcc, ref_raw_mcc, ref_noconv = [], [], []
    if do_ref:
        cache: dict[tuple[bytes, float], tuple[float, float, bool]] = {}
        X64, Xte64 = X.astype(np.float64), Xte.astype(np.float64)
        with threadpool_limits(limits=1), warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for reg, seed, C, rows in cells:
                key = (rows.tobytes(), C)
                if key not in cache:
                    sc = StandardScaler().fit(X64[rows])
                    Xs, Xt = sc.transform(X64[rows]), sc.transform(Xte64)
                    solver = "newton-cholesky" if n_classes == 2 and len(rows) > 256 else "lbfgs"
                    m = LogisticRegression(C=C, tol=1e-10, max_iter=10000, solver=solver)
                    m.fit(Xs, y[rows])
                    dec = m.decision_function(Xt)
                    dec = dec[:, None] if dec.ndim == 1 else dec
                    mag = np.abs(Xt) @ np.abs(m.coef_).T + np.abs(m.intercept_)
                    # the reference goes through the same pipeline as geneb's cells: tie
                    # snapping as the fast backend does, then the engine's own metrics
                    proba = proba_from_logits(dec, n_classes > 2, mag)
                    conv = bool(np.max(m.n_iter_) < 10000)
                    cache[key] = (compute_metrics(yte, proba, n_classes)["mcc"],
                                  matthews_corrcoef(yte, m.predict(Xt)), conv)
                mcc, raw, conv = cache[key]
                ref_mcc.append(mcc)
                ref_raw_mcc.append(raw)
                if not conv:
                    ref_noconv.append(f"{reg}/seed{seed}/C={C:g}")
    return naive_s, np.array(naive_mcc), np.array(ref_mcc), np.array(ref_raw_mcc), ref_noconv


def bench_task(task: str, args: argparse.Namespace, work: Path) -> dict:
    from geneb.extract.runner import extract
    from geneb.probe.engine import run_probes
    from geneb.results.table import read_results
    from geneb.store import FeatureStore

    store_path = work / "store"
    t0 = time.perf_counter()
    store = FeatureStore(store_path, "a")
    extract(store, [args.model], [task], data_dir=args.data_dir)
    extract_s = time.perf_counter() - t0
    grid = dict(shots="1,10,full", seeds=args.seeds, Cs=args.Cs, standardize=True)

    # geneb runs, each on a fresh results file (an existing one would make a rerun a no-op),
    # API and CLI interleaved; the median of --repeats runs is reported, every run is kept
    env = {**os.environ, "GENEB_NO_PROGRESS": "1"}
    api_runs, cli_runs = [], []
    for rep in range(args.repeats):
        out_api = work / f"{task}_api_{rep}.parquet"
        t0 = time.perf_counter()
        summary = run_probes(store_path, out_api, models=[args.model], tasks=[task],
                             backend=args.backend, **grid)
        api_runs.append(time.perf_counter() - t0)
        out_cli = work / f"{task}_cli_{rep}.parquet"
        cmd = [str(Path(sys.executable).parent / "geneb"), "probe", "--store", str(store_path),
               "--out", str(out_cli), "--model", args.model, "--task", task,
               "--shots", "1,10,full", "--seeds", args.seeds, "--C", args.Cs, "--standardize",
               "--backend", args.backend]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        cli_runs.append(time.perf_counter() - t0)
    api_s, cli_s = float(np.median(api_runs)), float(np.median(cli_runs))
    # every run must report the very same numbers (reproducibility, not just closeness)
    runs = [read_results(work / f"{task}_{kind}_{r}.parquet")
            .sort_values(["regime", "seed", "C"]).reset_index(drop=True)
            for kind in ("api", "cli") for r in range(args.repeats)]
    runs_identical = all(np.array_equal(x[["mcc", "n_iter"]].to_numpy(),
                                        runs[0][["mcc", "n_iter"]].to_numpy()) for x in runs)

    res = read_results(out_api)
    res = res[(res.task == task) & (res.model == args.model)].reset_index(drop=True)
    tr = store.get(args.model, task, "train")
    te = store.get(args.model, task, "test")
    pos_of_row = {int(r): i for i, r in enumerate(tr.rows)}
    all_pos = np.arange(len(tr.rows))
    res["positions"] = [all_pos if reg == "full" else
                        np.array([pos_of_row[int(r)] for r in rows], dtype=np.int64)
                        for reg, rows in zip(res.regime, res.train_rows, strict=True)]
    X, y = np.asarray(tr.embeddings, np.float32), np.asarray(tr.labels, np.int64)
    Xte, yte = np.asarray(te.embeddings, np.float32), np.asarray(te.labels, np.int64)
    n_classes = int(max(y.max(), yte.max()) + 1)
    naive_s, naive_mcc, ref_mcc, ref_raw, noconv = _naive_and_reference(
        X, y, Xte, yte, res, n_classes, args.naive_threads, not args.no_reference)
    geneb_mcc = res.mcc.to_numpy()
    cli_res = read_results(out_cli).sort_values(["regime", "seed", "C"]).reset_index(drop=True)
    api_sorted = res.sort_values(["regime", "seed", "C"]).reset_index(drop=True)
    out = {
        "task": task, "shape": list(X.shape), "cells": len(res), "extract_s": extract_s,
        "naive_s": naive_s, "api_s": api_s, "cli_s": cli_s, "api_runs_s": api_runs,
        "cli_runs_s": cli_runs, "runs_identical": runs_identical,
        "ratio_api": {k: v / api_s for k, v in naive_s.items()},
        "ratio_cli": {k: v / cli_s for k, v in naive_s.items()},
        "summary_s": getattr(summary, "seconds", None),
        "all_converged": bool(res.converged.all()),
        "not_converged": [f"{r.regime}/seed{r.seed}/C={r.C:g}"
                          for r in res.itertuples() if not r.converged],
        "cli_vs_api_max_dmcc": float(np.abs(cli_res.mcc.to_numpy()
                                            - api_sorted.mcc.to_numpy()).max()),
    }
    if len(ref_mcc):
        d = np.abs(geneb_mcc - ref_mcc)
        out.update({
            "geneb_vs_ref_max_dmcc": float(d.max()),
            "geneb_vs_ref_raw_argmax_max_dmcc": float(np.abs(geneb_mcc - ref_raw).max()),
            "naive_vs_ref_max_dmcc": float(np.abs(naive_mcc - ref_mcc).max()),
            "cells_over_0.005": [f"{r.regime}/seed{r.seed}/C={r.C:g}: {dd:.4f}"
                                 for r, dd in zip(res.itertuples(), d, strict=True)
                                 if dd > 0.005],
            "cells_differing": [f"{r.regime}/seed{r.seed}/C={r.C:g}: {dd:.4f}"
                                for r, dd in zip(res.itertuples(), d, strict=True) if dd > 0],
            "reference_not_converged": noconv,
        })
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", default="gue_mouse_0,gue_tf_0")
    ap.add_argument("--model", default="kmer-5")
    ap.add_argument("--data-dir", default=_default_data_dir())
    ap.add_argument("--seeds", default="13,17,42,123,997")
    ap.add_argument("--Cs", default="0.01,0.1,1,10,100")
    ap.add_argument("--backend", default="fast")
    ap.add_argument("--naive-threads", default="default,1",
                    help="comma list of BLAS thread settings to time the naive loop under "
                         "('default' = the libraries' own)")
    ap.add_argument("--no-reference", action="store_true", help="skip the tol 1e-10 reference")
    ap.add_argument("--repeats", type=int, default=3,
                    help="geneb runs (API and CLI each) per task; the median is reported")
    ap.add_argument("--json", help="also write the results to this JSON file")
    args = ap.parse_args()
    os.environ.setdefault("GENEB_NO_PROGRESS", "1")
    args.naive_threads = [None if t.strip() == "default" else int(t)
                          for t in args.naive_threads.split(",")]
    # geneb's bytecode, as a regular pip install leaves it: where PYTHONDONTWRITEBYTECODE is
    # set (this sandbox), every CLI start would otherwise recompile geneb's modules (~40 ms)
    import compileall

    import geneb

    compileall.compile_dir(str(Path(geneb.__file__).parent), quiet=1)
    results = []
    for task in args.tasks.split(","):
        with tempfile.TemporaryDirectory(prefix="geneb-bench-") as tmp:
            r = bench_task(task.strip(), args, Path(tmp))
        results.append(r)
        print(json.dumps(r, indent=1, default=float), flush=True)
    print("\ntask            cells  naive_s(threads)          api_s   cli_s  naive/api  naive/cli"
          "  max|dMCC| vs ref")
    for r in results:
        for j, (k, v) in enumerate(r["naive_s"].items()):
            head = f"{r['task']:<15} {r['cells']:>5}" if j == 0 else " " * 21
            tail = (f"{r['api_s']:>7.2f} {r['cli_s']:>7.2f}" if j == 0 else " " * 15)
            dm = r.get("geneb_vs_ref_max_dmcc", float("nan")) if j == 0 else float("nan")
            print(f"{head}  {v:>8.1f} ({k:<8})        {tail} {r['ratio_api'][k]:>9.1f}x "
                  f"{r['ratio_cli'][k]:>9.1f}x  {'' if j else f'{dm:.4f}'}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=float))


if __name__ == "__main__":
    main()
