"""The probe phase at GENEB's real sizes, on realistic embeddings, against the machine's limit.

Embeddings are drawn by ``real_size_fit.generate`` with the spectrum, mean offset and class
separation fitted to real ones (``real_size_fit.py``, docs/probing.md). GENEB's shapes: widths
256, 768, 1,024, 2,560, 4,096 x train sizes 1,000, 10,000, 30,000, 100,000 x binary or
3 classes, test a quarter of train (``--grid`` runs that whole cross product; the default
runs ``MEASURED``, a subset with the largest costly shapes and small ones: the cross product
is hours on a shared 2-core machine). For each shape, in one process:

* the whole 75-cell grid (3 regimes x 5 seeds x C 0.01..100) through ``geneb.probe_arrays``
  (the API), timed per regime, and through ``geneb probe`` (the CLI, one call, start-up
  included, on a store written first; ``--cli``);
* the limit, measured in the same run: the float32 data Hessian Gram (``X^T X`` at the
  measured rate: K'^2 of them for K' = K - 1 weight vectors, K' = 1 binary) plus 50 passes of
  X over K' vectors, the fewest a full-data path can make; ratio = full regime / limit;
* the full regime's peak memory over the embeddings' size (``--memory``: VmHWM of a child
  process that loads the pair, one extra run);
* the paper protocol (scikit-learn ``LogisticRegression(C, max_iter=1000)``) on the same
  pair, per regime (``--paper``; shapes above ``--paper-max-cells`` n*d are skipped and said);
* the MLP probe's 15 cells of the pair (1/10-shot/full x 5 seeds, ``--mlp``: what the MLP
  check costs per pair; ``real_size_projection.py --mlp-pairs`` projects it).

Repeats alternate limit and solve (``--repeats``, medians): on a shared machine the ratio of
two figures measured side by side is the robust one. ``--before REV`` also times, alternating,
the full regime with the solver of git revision REV (``real_size_before.solver_at``), e.g.
the commit before a change to ``geneb/probe/solvers``.

``--device cuda`` runs the same shapes and grids through the torch backend
(``backend="torch"``) when torch sees a CUDA device, and exits saying so otherwise; the
limit columns then still describe this machine's CPU (a GPU limit is ``gpu_check.py``'s).
Not run in the session that wrote it (no GPU was lent).

    .venv/bin/python benchmarks/real_size.py --shapes 1000x256x2,10000x768x3 --repeats 1
    .venv/bin/python benchmarks/real_size.py --json real_size.json --md real_size.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from real_size_before import before_regime, solver_at  # noqa: E402
from realistic_embeddings import (  # noqa: E402 (tests/ put on the path above)
    GENEB_MCC_QUANTILES,
    SEPARABLE,
    generate,
)

WIDTHS = (256, 768, 1024, 2560, 4096)
TRAINS = (1000, 10000, 30000, 100000)
CLASSES = (2, 3)
#: (train rows, width, classes) measured by default: the costly corner and small shapes
MEASURED = ((1000, 256, 2), (10000, 768, 2), (10000, 1024, 3), (30000, 1024, 3),
            (100000, 1024, 2), (30000, 2560, 2), (20000, 4096, 2))
#: the fewest passes of X over a vector a full-data C path needs (issue 30)
MIN_PASSES = 50


def difficulty(level: str) -> dict:
    """The generator's class separation for ``--mcc`` (``realistic_embeddings.PROFILES``): a
    quantile of GENEB's published full-regime MCCs, or the former near-separable draw."""
    if level == "separable":
        return dict(SEPARABLE)
    return {"mcc": GENEB_MCC_QUANTILES[level]}


def parse_shapes(text: str) -> list[tuple[int, int, int]]:
    out = []
    for part in text.split(","):
        n, d, k = (int(v) for v in part.lower().split("x"))
        out.append((n, d, k))
    return out


def _median_time(fn, budget: float = 0.3) -> float:
    """Median seconds of repeated calls of ``fn`` (one call when it takes over ``budget`` s,
    else at least 3 and ``budget`` s in all): the solver meets the machine's typical state,
    not its best moment (the outer repeats give a slow call its median)."""
    times: list[float] = []
    while not times or (times[0] <= budget and (sum(times) < budget or len(times) < 3)):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def warm_up(before: ModuleType | None = None, row_space: bool = True) -> float:
    """Imports and first-call costs, not timed per shape: a small probe, the full-data
    passes' kernels (binary, 3 classes; the ``--before`` solver's too) loaded; returns their
    seconds. ``row_space``: a row-space fit too (its kernels' first load, 0.4-0.6 s, fell in
    the first run); not for ``--memory``, whose baseline would hold its freed heap."""
    from geneb.probe.solvers import fast_passes

    X, y = generate(200, 16, 3, seed=0)
    probe_regime((X[:150], y[:150] % 2, X[150:], y[150:] % 2), "full")
    took = _load_kernels(fast_passes, X, y, lambda data: probe_regime(data, "full"))
    Xw, yw = generate(375, 640, 3, seed=1)  # 300 train rows: past the few-shot solver
    for labels in (yw % 2, yw) if row_space else ():
        probe_regime((Xw[:300], labels[:300], Xw[300:], labels[300:]), "full")
    if before is not None:
        _load_kernels(sys.modules["before_fast_passes"], X, y,
                      lambda data: before_regime(data, before, probe_regime))
    return took


def _load_kernels(passes: ModuleType, X: np.ndarray, y: np.ndarray, run) -> float:  # noqa: ANN001
    """Seconds of ``run`` on a small pair, binary then 3 classes, with ``passes``' kernels
    forced (threshold 0)."""
    kept = passes.KERNEL_MIN_CELLS
    passes.KERNEL_MIN_CELLS = 0
    t0 = time.perf_counter()
    try:
        for labels in (y % 2, y):
            run((X[:150], labels[:150], X[150:], labels[150:]))
    finally:
        passes.KERNEL_MIN_CELLS = kept
    return time.perf_counter() - t0


def measure_limit(X: np.ndarray, Kp: int, threads: int) -> dict[str, float]:
    """Seconds of one float32 Gram of X, of one pass of X over Kp vectors, and the limit
    ``Kp^2 gram + MIN_PASSES pass``, with the solver's own parallel means: ``threads``
    Python threads over the Gram's two upper-triangle panels and over fixed row blocks, BLAS
    single-threaded (OpenBLAS's own threads on a loaded machine measured 0.6 GFLOP/s)."""
    from threadpoolctl import threadpool_limits

    from geneb.probe.solvers.numeric import upper_panels
    from geneb.probe.solvers.row_blocks import RowBlocks

    n, d = X.shape
    V = np.ones((d, Kp), dtype=np.float32)
    rb = RowBlocks(n, threads)
    panels = upper_panels(0, d)
    try:
        with threadpool_limits(limits=1):
            gram = _median_time(lambda: rb.run(lambda c0, c1: X[:, :c1].T @ X[:, c0:c1], panels))
            one = _median_time(lambda: rb.map(lambda a, b: X[a:b] @ V))
    finally:
        rb.close()
    return {"gram_s": gram, "gemm_gflops": n * d * d / gram / 1e9, "pass_s": one,
            "limit_s": Kp * Kp * gram + MIN_PASSES * one}


def probe_regime(data: tuple, regime: str, protocol: str = "converged", backend: str = "auto"
                 ) -> dict:
    """One regime of the 75-cell grid (5 seeds x 5 C) through ``geneb.probe_arrays``."""
    import geneb
    from geneb.vocabulary import DEFAULT_C_SWEEP, DEFAULT_SEEDS

    X, y, Xte, yte = data
    t0 = time.perf_counter()
    df = geneb.probe_arrays(X, y, Xte, yte, shots=[regime], seeds=DEFAULT_SEEDS,
                            Cs=DEFAULT_C_SWEEP, protocol=protocol, backend=backend)
    seconds = time.perf_counter() - t0
    one_seed = df[df.seed == df.seed.iloc[0]]  # full regime: every seed shares the C path
    return {"seconds": seconds, "path_s": float(one_seed.fit_seconds.sum()), "cells": len(df),
            "converged": int(df.converged.sum()), "backend": str(df.backend.iloc[0]),
            "mcc_full_C1": float(df[df.C == 1.0].mcc.mean())}


def mlp_grid(data: tuple) -> dict:
    """The MLP probe's 15 cells (3 regimes x 5 seeds) of the pair through
    ``geneb.probe_arrays`` (its default backend: torch, on this machine's CPU)."""
    import geneb
    from geneb.vocabulary import DEFAULT_SEEDS

    X, y, Xte, yte = data
    t0 = time.perf_counter()
    df = geneb.probe_arrays(X, y, Xte, yte, probe="mlp", seeds=DEFAULT_SEEDS)
    return {"seconds": time.perf_counter() - t0, "cells": len(df),
            "converged": int(df.converged.sum()), "backend": str(df.backend.iloc[0]),
            "mcc_full": float(df[df.regime == "full"].mcc.mean())}


def _rss_kib(field: str) -> int:
    """``field`` (VmRSS, VmHWM) of this process from /proc/self/status, in KiB."""
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(field + ":"))


def memory_child(npz: str) -> None:
    """In a fresh process: load the pair's embeddings, reset the peak RSS, run the full
    regime, print the RSS figures as JSON (``--memory-child``)."""
    warm_up(row_space=False)  # imports and the kernels first: their pages are not the probe's
    base = _rss_kib("VmRSS")
    with np.load(npz) as z:
        data = (z["X"], z["y"], z["Xte"], z["yte"])
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
    loaded = _rss_kib("VmRSS")
    probe_regime(data, "full")
    print(json.dumps({"base_kib": base, "loaded_kib": loaded, "peak_kib": _rss_kib("VmHWM")}))


def peak_memory(data: tuple, workdir: Path) -> dict[str, float]:
    """Peak resident memory of the full regime in a child process (VmHWM, reset once the
    embeddings are loaded; ru_maxrss would carry this parent's pages across fork and exec),
    over the embeddings' bytes: ``(peak - RSS after imports) / embeddings``, so the
    embeddings themselves count, the interpreter and libraries do not."""
    X, y, Xte, yte = data
    npz = workdir / "pair.npz"
    np.savez(npz, X=X, y=y, Xte=Xte, yte=yte)
    res = subprocess.run([sys.executable, __file__, "--memory-child", str(npz)], check=True,
                         capture_output=True, text=True, env={**os.environ})
    rss = json.loads(res.stdout.strip().splitlines()[-1])
    emb = X.nbytes + Xte.nbytes
    probe_bytes = (rss["peak_kib"] - rss["base_kib"]) * 1024
    return {"peak_gib": rss["peak_kib"] / 2**20, "base_gib": rss["base_kib"] / 2**20,
            "embeddings_gib": emb / 2**30, "peak_over_emb": probe_bytes / emb}


def cli_probe(data: tuple, workdir: Path, options: list[str], fingerprint: str
              ) -> tuple[float, Any]:
    """``geneb probe`` with ``options`` on the pair written to a store in ``workdir`` first:
    (seconds of the call, start-up included; its results table). Exits on a failed call."""
    import pandas as pd
    from probe_stores import write_entry  # tests/probe_stores.py

    from geneb.store import FeatureStore

    X, y, Xte, yte = data
    store = str(workdir / "s.zarr")
    fs = FeatureStore(store, "a")
    write_entry(fs, "m", "t", "train", X, y, task_fingerprint=fingerprint, batch=8192)
    write_entry(fs, "m", "t", "test", Xte, yte, task_fingerprint=f"{fingerprint}:test",
                batch=8192)
    results = workdir / "r.parquet"
    cmd = [sys.executable, "-m", "geneb", "probe", "--store", store, "--results",
           str(results), *options]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ})
    seconds = time.perf_counter() - t0
    if done.returncode:
        sys.exit(f"geneb probe failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return seconds, pd.read_parquet(results)


def cli_grid(data: tuple, workdir: Path) -> float:
    """Seconds of ``geneb probe`` over the 75-cell grid (one call, start-up included)."""
    from geneb.vocabulary import DEFAULT_C_SWEEP, as_list_text

    seconds, table = cli_probe(data, workdir, ["--C", as_list_text(DEFAULT_C_SWEEP)],
                               "real-size")
    if len(table) != 75 or not table.converged.all():
        sys.exit(f"geneb probe wrote {len(table)} rows, {int(table.converged.sum())} converged; "
                 "expected 75 converged cells")
    return seconds


def measure_shape(shape: tuple[int, int, int], args: argparse.Namespace) -> dict:
    """Everything measured on one shape (see module docstring)."""
    n, d, K = shape
    X_all, y_all = generate(n + n // 4, d, K, seed=n * 7 + d * 3 + K, stats=difficulty(args.mcc))
    data = (X_all[:n], y_all[:n], X_all[n:], y_all[n:])
    Kp = K - 1 if K > 2 else 1
    threads = args.threads
    Xc = np.ascontiguousarray(data[0])
    rows: dict[str, list] = {"limit": [], "full": [], "before": []}
    for _ in range(args.repeats):  # alternating: limit, the full regime (, its former rule)
        rows["limit"].append(measure_limit(Xc, Kp, threads))
        rows["full"].append(probe_regime(data, "full", backend=args.backend))
        if args.before:
            rows["before"].append(before_regime(data, args.before_solver, probe_regime))
    med = {k: float(np.median([r[k] for r in rows["limit"]])) for k in rows["limit"][0]}
    full_s = float(np.median([r["seconds"] for r in rows["full"]]))
    ratios = [f["seconds"] / li["limit_s"] for f, li in zip(rows["full"], rows["limit"],
                                                             strict=True)]
    path_ratios = [f["path_s"] / li["limit_s"] for f, li in zip(rows["full"], rows["limit"],
                                                                 strict=True)]
    out = {"n_train": n, "width": d, "classes": K, "mcc_level": args.mcc,
           "load": os.getloadavg()[0], **med,
           "full_s": full_s, "ratio": float(np.median(ratios)), "ratios": ratios,
           "path_s": float(np.median([r["path_s"] for r in rows["full"]])),
           "path_ratio": float(np.median(path_ratios)), "path_ratios": path_ratios,
           "full": rows["full"][-1]}
    if args.before:
        out["before_path_s"] = float(np.median([r["path_s"] for r in rows["before"]]))
        out["before_path_ratios"] = [f["path_s"] / li["limit_s"] for f, li in
                                     zip(rows["before"], rows["limit"], strict=True)]
        out["before_path_ratio"] = float(np.median(out["before_path_ratios"]))
    for regime in ("1", "10"):
        out[f"regime_{regime}_s"] = probe_regime(data, regime, backend=args.backend)["seconds"]
    out["grid_api_s"] = out["regime_1_s"] + out["regime_10_s"] + full_s
    if args.memory:
        with tempfile.TemporaryDirectory(prefix="geneb-realsize-") as tmp:
            out["memory"] = peak_memory(data, Path(tmp))
    if args.cli:
        with tempfile.TemporaryDirectory(prefix="geneb-realsize-") as tmp:
            out["grid_cli_s"] = cli_grid(data, Path(tmp))
    if args.mlp:
        out["mlp"] = mlp_grid(data)
    if args.paper and n * d <= args.paper_max_cells:
        out["paper"] = {r: probe_regime(data, r, protocol="paper", backend="sklearn")
                        for r in ("1", "10", "full")}
    elif args.paper:
        out["paper"] = f"not run: n*d = {n * d:,} > --paper-max-cells {args.paper_max_cells:,}"
    return out


def markdown(results: list[dict]) -> str:
    """The table: limit, C path and regime ratios (per run), grid, CLI, paper, memory."""
    cols = ("train x width x classes", "MCC level", "load", "Gram s (GFLOP/s)", "50 passes s",
            "limit s",
            "before path / limit (runs)", "C path s", "path / limit (runs)",
            "full regime s", "regime / limit", "1-shot s", "10-shot s", "grid API s",
            "grid CLI s", "paper full s", "peak mem / emb", "MLP 15 cells s")
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in results:
        paper = r.get("paper")
        paper_s = f"{paper['full']['seconds']:.1f}" if isinstance(paper, dict) else "-"
        mem = r.get("memory", {}).get("peak_over_emb")
        runs = ", ".join(f"{x:.2f}" for x in r["path_ratios"])
        before = ("-" if "before_path_ratio" not in r else f"{r['before_path_ratio']:.2f} (" +
                  ", ".join(f"{x:.2f}" for x in r["before_path_ratios"]) + ")")
        cli = r.get("grid_cli_s")
        cells = (f"{r['n_train']:,} x {r['width']:,} x {r['classes']}", r.get("mcc_level", "-"),
                 f"{r['load']:.1f}",
                 f"{r['gram_s']:.2f} ({r['gemm_gflops']:.0f})",
                 f"{MIN_PASSES * r['pass_s']:.2f}", f"{r['limit_s']:.2f}", before,
                 f"{r['path_s']:.2f}",
                 f"**{r['path_ratio']:.2f}** ({runs})", f"{r['full_s']:.2f}",
                 f"{r['ratio']:.2f}", f"{r['regime_1_s']:.2f}", f"{r['regime_10_s']:.2f}",
                 f"{r['grid_api_s']:.1f}", "-" if cli is None else f"{cli:.1f}", paper_s,
                 "-" if mem is None else f"{mem:.2f}",
                 f"{r['mlp']['seconds']:.1f}" if "mlp" in r else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def cuda_usable() -> bool:
    try:
        import torch

        return bool(torch.cuda.is_available())
    except ImportError:
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", help="n x d x K list, e.g. 1000x256x2,30000x2560x3")
    ap.add_argument("--grid", action="store_true", help="GENEB's whole cross product")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2, help="threads of the limit")
    ap.add_argument("--cli", action="store_true", help="also time `geneb probe`")
    ap.add_argument("--paper", action="store_true", help="also the paper protocol")
    ap.add_argument("--paper-max-cells", type=int, default=2_000_000)
    ap.add_argument("--mlp", action="store_true", help="also the MLP probe's 15 cells")
    ap.add_argument("--memory", action="store_true", help="also the peak memory (VmHWM of a child)")
    ap.add_argument("--memory-child", help=argparse.SUPPRESS)
    ap.add_argument("--before", metavar="REV",
                    help="also the full regime with the solver of git revision REV, alternating")
    ap.add_argument("--mcc", choices=(*GENEB_MCC_QUANTILES, "separable"), default="median",
                    help="class separation: a quantile of GENEB's published full-regime MCCs "
                         "(Bayes MCC of the draw), or the former near-separable draw")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--json")
    ap.add_argument("--md")
    args = ap.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return
    args.backend = "auto"
    args.before_solver = solver_at(args.before) if args.before else None
    if args.device == "cuda":
        if not cuda_usable():
            sys.exit("--device cuda: torch sees no CUDA device here; nothing was run")
        args.backend = "torch"
    shapes = (parse_shapes(args.shapes) if args.shapes else
              [(n, d, k) for n in TRAINS for d in WIDTHS for k in CLASSES] if args.grid
              else list(MEASURED))
    print(json.dumps({"kernel_load_s": warm_up(args.before_solver)}), flush=True)
    results = []
    for shape in shapes:
        res = measure_shape(shape, args)
        print(json.dumps(res), flush=True)
        results.append(res)
    table = markdown(results)
    print(table)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    if args.md:
        Path(args.md).write_text(table + "\n")


if __name__ == "__main__":
    main()
