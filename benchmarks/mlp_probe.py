"""MLP probe benchmark: the torch backend (all cells of a task as one stacked model) against
``--backend sklearn`` (one ``MLPClassifier`` at a time), on real tasks, in one process.

What it prints, per task (k-mer spectra computed from the task folders, standardised, the 15
MLP cells of the GENEB grid: regimes 1/10/full x 5 seeds, rows drawn by the protocol):

* wall time of the 15 cells per backend (torch: medians of ``--repeats``) and the speed-up;
* the achieved float32 FLOP rate of the torch run, counted as the issue defines it:
  ``sum over cells of epochs run x 4 x train rows x dim x hidden`` (forward X @ W1 and the
  W1 gradient X^T @ delta, 2 FLOP per multiply-add each; the small output layer is not
  counted) over the wall time, against two matrix-multiply peaks measured in the same run,
  interleaved with the MLP runs (medians): ``torch.mm`` of the full train matrix
  (n x d @ d x hidden) and the batched GEMMs of one training step (5 x 200 x d @ d x hidden
  and its transpose), both with the same threads;
* per regime, mean MCC over seeds of both backends, their difference, and the per-cell rank
  agreement (Spearman over the cells of all tasks);
* ``--device cuda``: time per (model, task) pair on the GPU and the projected hours of the
  MLP phase of a 40 x 100 study (pairs x this pair's time: an estimate from one task size).

    python benchmarks/mlp_probe.py --tasks gue_mouse_0,gue_prom_300_tata --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
SEEDS = (13, 17, 42, 123, 997)
REGIMES = ("1", "10", "full")


def load_task(data_dir: Path, task: str, k: int):
    import pandas as pd

    from geneb.models.adapters.kmer import kmer_spectrum
    from geneb.probe.solvers.base import ProbeProblem

    tr = pd.read_csv(data_dir / task / "train.csv")
    te = pd.read_csv(data_dir / task / "test.csv")
    X = np.ascontiguousarray(kmer_spectrum(tr.sequence.tolist(), k), dtype=np.float32)
    Xt = np.ascontiguousarray(kmer_spectrum(te.sequence.tolist(), k), dtype=np.float32)
    y, yt = tr.label.to_numpy(np.int64), te.label.to_numpy(np.int64)
    K = int(max(y.max(), yt.max()) + 1)
    return ProbeProblem(X, y, Xt, K, standardize=True), yt


def grid_cells(problem, task: str):
    """The 15 MLP cells as the engine plans them (protocol.draw, the task as fingerprint)."""
    from geneb.probe.solvers.base import ProbeFit
    from geneb.protocol import draw

    rows = np.arange(len(problem.y_train))
    cells = []
    for regime in REGIMES:
        for s in SEEDS:
            smp = draw(regime, problem.y_train, rows, seed=s, task_fingerprint=task,
                       n_classes=problem.n_classes)
            k = None if regime == "full" else int(regime)
            cells.append(ProbeFit(regime, k, s, float("nan"), smp.positions))
    return cells


def mm_peaks(n: int, d: int, h: int, device: str, threads: int, reps: int = 5
             ) -> dict[str, float]:
    """GFLOP/s of torch.mm (n x d @ d x h) and of one step's batched GEMMs (5 x 200 rows):
    the best of 1 torch thread and ``threads`` threads (on a busy machine OpenMP threads can
    be slower than one; the peak is the best the hardware gave in this run)."""
    from geneb.probe.solvers.mlp_torch import torch_threads

    out = {"mm_full": 0.0, "bmm_step": 0.0}
    for t in sorted({1, threads}) if device == "cpu" else [None]:
        with torch_threads(t):
            pk = _mm_peaks(n, d, h, device, reps)
        out = {k: max(out[k], pk[k]) for k in out}
    return out


def _mm_peaks(n: int, d: int, h: int, device: str, reps: int) -> dict[str, float]:
    import torch

    def rate(fn, flop):
        fn()
        sync()
        best = []
        for _ in range(reps):
            t = time.perf_counter()
            fn()
            sync()
            best.append(time.perf_counter() - t)
        return flop / statistics.median(best) / 1e9

    def sync():
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    g = torch.Generator().manual_seed(0)
    A = torch.randn(n, d, generator=g).to(device)
    B = torch.randn(d, h, generator=g).to(device)
    Xb = torch.randn(5, 200, d, generator=g).to(device)
    W = torch.randn(5, d, h, generator=g).to(device)
    D = torch.randn(5, 200, h, generator=g).to(device)
    full = rate(lambda: torch.mm(A, B), 2.0 * n * d * h)
    step = rate(lambda: (torch.bmm(Xb, W), torch.bmm(Xb.transpose(1, 2), D)),
                4.0 * 5 * 200 * d * h)
    return {"mm_full": full, "bmm_step": step}


def flops(cells, fits, d: int, h: int) -> float:
    return float(sum(f.n_iter * 4.0 * len(c.train_idx) * d * h
                     for c, f in zip(cells, fits, strict=True)))


def mcc_of(yt, fits):
    from sklearn.metrics import matthews_corrcoef

    return [float(matthews_corrcoef(yt, f.proba.argmax(1))) for f in fits]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=os.environ.get("GENEB_DATA_DIR")
                    or str(REPO.parent / "shared" / "data"))
    ap.add_argument("--tasks", default="gue_mouse_0,gue_prom_300_tata",
                    help="the first one is timed for the speed and FLOP figures")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=3, help="torch runs and peaks (median)")
    ap.add_argument("--sklearn-repeats", type=int, default=1,
                    help="sklearn runs of the timed task (0: skip sklearn entirely)")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch CPU threads (default: all cores of this process)")
    ap.add_argument("--pairs", type=int, default=4000, help="study size for the projection")
    ap.add_argument("--json")
    args = ap.parse_args()

    import torch

    from geneb.probe.solvers.mlp import MLP_PARAMS, MLPProbe, TorchMLPProbe

    threads = args.threads or len(os.sched_getaffinity(0))
    h = MLP_PARAMS["hidden_layer_sizes"][0]
    torch_probe = TorchMLPProbe(device=args.device, threads=threads)
    sk_probe = MLPProbe(blas_threads=1)  # as the engine runs it
    report: dict = {"device": args.device, "threads": threads, "torch": torch.__version__,
                    "tasks": {}}
    per_regime: dict[str, dict[str, list[float]]] = {
        r: {"torch": [], "sklearn": []} for r in REGIMES}
    for ti, task in enumerate(args.tasks.split(",")):
        problem, yt = load_task(Path(args.data_dir), task, args.k)
        n, d = problem.X_train.shape
        cells = grid_cells(problem, task)
        timed = ti == 0
        t_torch, peaks_full, peaks_step = [], [], []
        fits_t = None
        for _ in range(args.repeats if timed else 1):  # interleaved: peak, MLP, peak, MLP...
            if timed:
                pk = mm_peaks(n, d, h, args.device, threads)
                peaks_full.append(pk["mm_full"])
                peaks_step.append(pk["bmm_step"])
            t0 = time.perf_counter()
            fits_t = torch_probe.solve(problem, cells)
            t_torch.append(time.perf_counter() - t0)
        row: dict = {"n_train": n, "dim": d, "n_test": len(yt),
                     "torch_s": statistics.median(t_torch), "torch_runs_s": t_torch,
                     "epochs": [f.n_iter for f in fits_t]}
        f_all = flops(cells, fits_t, d, h)
        row["gflop"] = f_all / 1e9
        if timed:
            row["gflops_achieved"] = f_all / row["torch_s"] / 1e9
            row["peak_mm_full"] = statistics.median(peaks_full)
            row["peak_bmm_step"] = statistics.median(peaks_step)
            row["frac_of_mm_full"] = row["gflops_achieved"] / row["peak_mm_full"]
            row["frac_of_bmm_step"] = row["gflops_achieved"] / row["peak_bmm_step"]
        if args.sklearn_repeats > 0:
            t_sk = []
            for _ in range(args.sklearn_repeats if timed else 1):
                t0 = time.perf_counter()
                fits_s = sk_probe.solve(problem, cells)
                t_sk.append(time.perf_counter() - t0)
            row["sklearn_s"] = statistics.median(t_sk)
            row["speedup"] = row["sklearn_s"] / row["torch_s"]
            row["epochs_sklearn"] = [f.n_iter for f in fits_s]
            mt, ms = mcc_of(yt, fits_t), mcc_of(yt, fits_s)
            row["mcc_torch"], row["mcc_sklearn"] = mt, ms
            for i, c in enumerate(cells):
                per_regime[c.regime]["torch"].append(mt[i])
                per_regime[c.regime]["sklearn"].append(ms[i])
            row["mcc_mean_diff"] = {
                r: float(np.mean([mt[i] for i, c in enumerate(cells) if c.regime == r])
                         - np.mean([ms[i] for i, c in enumerate(cells) if c.regime == r]))
                for r in REGIMES}
        if args.device.startswith("cuda"):
            row["pair_s"] = row["torch_s"]
            row["projected_study_hours"] = row["torch_s"] * args.pairs / 3600
        report["tasks"][task] = row
        _print_task(task, row)
    if args.sklearn_repeats > 0:
        from scipy.stats import spearmanr

        agg = {}
        for r, v in per_regime.items():
            rho = spearmanr(v["torch"], v["sklearn"]).statistic if len(v["torch"]) > 2 else None
            agg[r] = {"spearman_cells": None if rho is None else float(rho),
                      "n_cells": len(v["torch"])}
        report["rank_agreement"] = agg
        print("per-cell rank agreement (Spearman of MCC, torch vs sklearn, all tasks):")
        for r, a in agg.items():
            print(f"  regime {r:>4}: rho = {a['spearman_cells']:.3f} over {a['n_cells']} cells")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))


def _print_task(task: str, row: dict) -> None:
    print(f"[{task}] {row['n_train']} x {row['dim']}, 15 MLP cells, standardised")
    runs = ", ".join(f"{t:.2f}" for t in row["torch_runs_s"])
    print(f"  torch:   {row['torch_s']:.2f} s (runs {runs}), {row['gflop']:.0f} GFLOP, "
          f"epochs {row['epochs']}")
    if "gflops_achieved" in row:
        print(f"  FLOP rate {row['gflops_achieved']:.1f} GFLOP/s = "
              f"{100 * row['frac_of_mm_full']:.0f} % of torch.mm peak "
              f"{row['peak_mm_full']:.1f} GFLOP/s (n x d @ d x h), "
              f"{100 * row['frac_of_bmm_step']:.0f} % of the step-shaped bmm peak "
              f"{row['peak_bmm_step']:.1f} GFLOP/s")
    if "sklearn_s" in row:
        print(f"  sklearn: {row['sklearn_s']:.2f} s, epochs {row['epochs_sklearn']}")
        print(f"  speed-up torch vs sklearn: {row['speedup']:.2f}x")
        print("  mean MCC torch - sklearn per regime: " + ", ".join(
            f"{r}: {v:+.4f}" for r, v in row["mcc_mean_diff"].items()))
    if "projected_study_hours" in row:
        print(f"  {row['pair_s']:.2f} s per pair on {row.get('device', 'the GPU')}: MLP phase "
              f"of the study ~{row['projected_study_hours']:.1f} h")


if __name__ == "__main__":
    main()
