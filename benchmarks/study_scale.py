"""A scaled-down GENEB-shaped study, its per-pair cost by component, and a cost model (14.3).

GENEB is 40 models x 100 tasks. This builds M models x T tasks of synthetic (Gaussian class-
conditional) embeddings with GENEB's spread of shapes: model widths geometric from 128 to
4,096, task train sizes geometric from 100 to 20,000 times ``--scale`` (so that the MLP's full-
data fits, which are FLOP-bound, fit in a few minutes on 2 shared cores), binary and 3-class
tasks alternating, test splits a quarter of train. Then it runs the whole probe phase in this
process as ``geneb probe`` would (linear: 3 regimes x 5 seeds x 5 Cs = 75 cells per pair;
MLP: 15 cells per pair, the default MLP backend), twice:

(the MLP on ``--mlp-seeds`` of the 5 seeds, 1 by default: its full-data fits are FLOP-bound
and the cost model below is per unit of work, so the projection still counts 5 seeds)

* on the first half of the models (N pairs) into an empty table, and
* on all models (2N pairs: the second half has the same widths) into another empty table,

so linear growth shows as a ratio near 2 (and per-pair read/plan/write that do not grow).

It reports per-pair cost by component (read: results table + embeddings; plan; solve, split
into linear and MLP; write), peak RSS of the probing process (the store is built in a child
process), a float32 GEMM rate measured in the same run, and fits a cost model:

    linear solve per pair  = a + b * n_train * d * (K - 1 or 1)
    MLP solve per pair     = c + e * sum over MLP cells of (n_train * d * epochs)

fitted on CPU seconds of the probing process per pair (all its threads; wall time on a shared
machine measures the other users too), then projects the 40 x 100 study with GENEB's sizes
(train 100-20,000 unscaled, widths 128-4,096) on an otherwise idle 2-core machine (CPU
seconds / 2 cores / 0.85 parallel efficiency: two jobs measured 1.5-1.8x one) and, AS A
PROJECTION ONLY, on one GPU: the FLOP-bound MLP's CPU seconds scaled by the float32 GEMM rate
per CPU second measured here over ``--gpu-tflops``, the linear solves by the same factor
capped at ``--gpu-linear-speedup`` (memory-bound), read/plan/write unchanged.

    .venv/bin/python benchmarks/study_scale.py                 # 4 x 6, then 8 x 6 (~5-10 minutes)
    .venv/bin/python benchmarks/study_scale.py --models 2 --tasks 4 --scale 0.02 --no-mlp
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

#: helpers only tests and benchmarks use live in tests/ (not in the library): tests/probe_stores.py
_TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(_TESTS) not in sys.path:
    sys.path.insert(0, str(_TESTS))

LINEAR_GRID = dict(shots="1,10,full", seeds=(13, 17, 42, 123, 997),
                   Cs=(0.01, 0.1, 1.0, 10.0, 100.0))
GENEB_MODELS, GENEB_TASKS = 40, 100
MLP_HIDDEN = 256


def geometric(lo: float, hi: float, n: int) -> list[int]:
    return [int(round(v)) for v in np.geomspace(lo, hi, n)] if n > 1 else [int(lo)]


def shapes(n_models: int, n_tasks: int, scale: float) -> tuple[list[int], list[tuple[int, int]]]:
    """(model widths, task (n_train, n_classes)); the second half of the models repeats the
    widths of the first, so 2N pairs cost twice N when cost is linear in pairs."""
    half = max(1, n_models // 2)
    dims = geometric(128, 4096, half)
    dims = (dims * 2)[:n_models]
    trains = [max(60, int(n * scale)) for n in geometric(100, 20000, n_tasks)]
    return dims, [(n, 2 if i % 2 == 0 else 3) for i, n in enumerate(trains)]


def build_store(path: str, dims: list[int], tasks: list[tuple[int, int]]) -> None:
    from probe_stores import gaussian_task  # tests/probe_stores.py (see _TESTS above)

    from geneb.store import FeatureStore

    fs = FeatureStore(path, "a")
    for mi, d in enumerate(dims):
        for ti, (n, k) in enumerate(tasks):
            gaussian_task(fs, f"m{mi:02d}-d{d}", f"t{ti:02d}-n{n}-k{k}", n_train=n,
                          n_test=max(50, n // 4), n_classes=k, dim=d, sep=1.0,
                          seed=mi * 1000 + ti)


def gemm_gflops() -> float:
    """float32 GEMM rate per CPU second (all BLAS threads' CPU time), best of 3: the rate of
    one core, whatever else runs on the machine."""
    a = np.random.default_rng(0).standard_normal((2048, 2048), dtype=np.float32)
    best = 0.0
    for _ in range(3):
        t0 = time.process_time()
        a @ a
        best = max(best, 2 * 2048**3 / max(1e-9, time.process_time() - t0) / 1e9)
    return best


def run_phase(store: str, out: Path, models: list[str], mlp: bool,
              mlp_seeds: tuple[int, ...]) -> dict:
    """Linear then MLP over ``models`` x every task, in-process; per-pair component costs."""
    from geneb.probe.engine import run_probes
    from geneb.results.table import read_results

    marks: list[tuple[str, str, float]] = []

    def cpu_mark(model: str, task: str, _n: int) -> None:
        marks.append((model, task, time.process_time()))

    def cpu_per_pair(c0: float) -> list[list]:
        out, prev = [], c0
        for m, t, c in marks:
            out.append([m, t, c - prev])
            prev = c
        marks.clear()
        return out

    t0 = time.perf_counter()
    c0 = time.process_time()
    lin = run_probes(store, out, models=models, workers=1, backend="fast",
                     on_pair_done=cpu_mark, **LINEAR_GRID)
    lin_cpu = cpu_per_pair(c0)
    runs = [lin]
    mlp_cpu: list[list] = []
    if mlp:
        c0 = time.process_time()
        runs.append(run_probes(store, out, models=models, workers=1, probe="mlp",
                               shots="1,10,full", seeds=mlp_seeds, on_pair_done=cpu_mark))
        mlp_cpu = cpu_per_pair(c0)
    total = time.perf_counter() - t0
    cpu_total = time.process_time() - c0 + sum(x[2] for x in lin_cpu)
    n_pairs = lin.n_pairs
    df = read_results(out)
    comp = {k: sum(r.timings[k] for r in runs) for k in ("read", "plan", "write")}
    comp["solve_linear"] = lin.timings["solve"]
    comp["solve_mlp"] = runs[1].timings["solve"] if mlp else 0.0
    return {
        "pairs": n_pairs, "total_s": total, "per_pair_s": total / n_pairs,
        "per_pair_component_s": {k: v / n_pairs for k, v in comp.items()},
        "cpu_total_s": cpu_total,
        "linear_pair_solve_wall": [list(x) for x in lin.pair_solve_seconds],
        # CPU seconds of this process (all its threads) per pair: what the cost model uses,
        # because on a shared machine wall time measures the other users as much as geneb
        "linear_pair_solve": lin_cpu,
        "mlp_pair_solve": mlp_cpu,
        "mlp_epochs": (df[df.probe == "mlp"].groupby("regime").n_iter.mean().to_dict()
                       if mlp else {}),
        "mlp_work": (df[df.probe == "mlp"].assign(w=lambda x: x.n_train * x.n_iter)
                     .groupby(["model", "task"]).w.sum().to_dict() if mlp else {}),
    }


def _warm_up(store: str, model: str, out: Path, mlp: bool) -> None:
    """One tiny untimed run: imports and first-call costs are not per-pair costs."""
    from geneb.probe.engine import run_probes

    run_probes(store, out, models=[model], workers=1, shots="1", seeds=(13,), Cs=(1.0,))
    if mlp:
        run_probes(store, out, models=[model], workers=1, probe="mlp", shots="1", seeds=(13,))


def _dim(model: str) -> int:
    return int(model.rsplit("-d", 1)[1])


def _task_shape(task: str) -> tuple[int, int]:
    _, n, k = task.split("-")
    return int(n[1:]), int(k[1:])


def fit_cost_model(phase: dict) -> dict:
    """Least squares of per-pair CPU seconds (solve and write) on work (module docstring)."""
    def lsq(xs: list[float], ys: list[float]) -> tuple[float, float]:
        A = np.column_stack([np.ones(len(xs)), xs])
        coef, *_ = np.linalg.lstsq(A, np.asarray(ys), rcond=None)
        return max(0.0, float(coef[0])), max(0.0, float(coef[1]))

    xs, ys = [], []
    for m, t, s in phase["linear_pair_solve"]:
        n, k = _task_shape(t)
        xs.append(n * _dim(m) * (1 if k == 2 else k))
        ys.append(s)
    model = {"linear_a_s": 0.0, "linear_b_s_per_unit": 0.0, "mlp_c_s": 0.0,
             "mlp_e_s_per_unit": 0.0}
    model["linear_a_s"], model["linear_b_s_per_unit"] = lsq(xs, ys)
    if phase["mlp_pair_solve"]:
        wx, wy = [], []
        for m, t, s in phase["mlp_pair_solve"]:
            wx.append(phase["mlp_work"][(m, t)] * _dim(m))
            wy.append(s)
        model["mlp_c_s"], model["mlp_e_s_per_unit"] = lsq(wx, wy)
    return model


def project(model: dict, phase: dict, gflops: float, args: argparse.Namespace) -> dict:
    """The 40 x 100 study with GENEB's (unscaled) sizes, from the fitted model."""
    dims = geometric(128, 4096, GENEB_MODELS)
    tasks = [(n, 2 if i % 2 == 0 else 3) for i, n in enumerate(geometric(100, 20000,
                                                                         GENEB_TASKS))]
    ep = phase["mlp_epochs"] or {}
    fixed = sum(phase["per_pair_component_s"][k] for k in ("read", "plan", "write"))
    lin = mlp = 0.0
    for d in dims:
        for n, k in tasks:
            lin += model["linear_a_s"] + model["linear_b_s_per_unit"] * n * d * (
                1 if k == 2 else k)
            if ep:  # 5 seeds per regime; k-shot cells see k rows per class
                work = 5 * d * (ep.get("1", 0) * k + ep.get("10", 0) * 10 * k
                                + ep.get("full", 0) * n)
                mlp += model["mlp_c_s"] + model["mlp_e_s_per_unit"] * work
    pairs = GENEB_MODELS * GENEB_TASKS
    cpu_1 = lin + mlp + fixed * pairs
    gpu_factor = args.gpu_tflops * 1000 / gflops
    gpu = (lin / min(gpu_factor, args.gpu_linear_speedup) + mlp / gpu_factor + fixed * pairs)
    return {
        "pairs": pairs, "linear_solve_h_1core": lin / 3600, "mlp_solve_h_1core": mlp / 3600,
        "read_plan_write_h": fixed * pairs / 3600,
        "cpu_2cores_h": cpu_1 / 1.7 / 3600,  # 2 cores at 85 % efficiency
        "gpu_projection_h": gpu / 3600,
        "assumptions": {"two_core_speedup": 1.7, "gpu_tflops_fp32": args.gpu_tflops,
                        "cpu_gemm_gflops_measured": gflops,
                        "gpu_linear_speedup_cap": args.gpu_linear_speedup,
                        "mlp_epochs_per_regime": ep},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, default=4, help="models of the 2N run (even)")
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--scale", type=float, default=0.02, help="train sizes x this")
    ap.add_argument("--no-mlp", action="store_true")
    ap.add_argument("--mlp-seeds", type=int, default=1,
                    help="seeds of the MLP cells run here (GENEB: 5; the cost model is per "
                         "unit of work, so the projection counts all 5 whatever is run)")
    ap.add_argument("--gpu-tflops", type=float, default=50.0,
                    help="sustained float32 (TF32) rate assumed for the GPU projection")
    ap.add_argument("--gpu-linear-speedup", type=float, default=20.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    dims, tasks = shapes(args.models, args.tasks, args.scale)
    work = Path(tempfile.mkdtemp(prefix="geneb-study-"))
    try:
        store = str(work / "store")
        t0 = time.perf_counter()
        p = mp.get_context("spawn").Process(target=build_store, args=(store, dims, tasks))
        p.start()
        p.join()
        if p.exitcode != 0:
            raise SystemExit("building the synthetic store failed")
        print(f"store: {len(dims)} models (d={dims}) x {len(tasks)} tasks "
              f"(n_train={[n for n, _ in tasks]}) built in {time.perf_counter() - t0:.0f} s "
              f"(not timed)", flush=True)
        gflops = gemm_gflops()
        models = [f"m{i:02d}-d{d}" for i, d in enumerate(dims)]
        _warm_up(store, models[0], work / "warm.parquet", not args.no_mlp)
        mlp_seeds = LINEAR_GRID["seeds"][: args.mlp_seeds]
        half = run_phase(store, work / "half.parquet", models[: len(models) // 2],
                         not args.no_mlp, mlp_seeds)
        full = run_phase(store, work / "full.parquet", models, not args.no_mlp, mlp_seeds)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    finally:
        shutil.rmtree(work, ignore_errors=True)
    model = fit_cost_model(full)
    proj = project(model, full, gflops, args)
    print(f"float32 GEMM (this run): {gflops:.0f} GFLOP per CPU second")
    for name, ph in (("N", half), ("2N", full)):
        comp = "  ".join(f"{k} {v:.3f}" for k, v in ph["per_pair_component_s"].items())
        print(f"{name:>2} = {ph['pairs']:3d} pairs: {ph['total_s']:7.1f} s wall "
              f"({ph['cpu_total_s']:.1f} s CPU), per pair "
              f"{ph['per_pair_s']:.2f} s  ({comp})")
    print(f"2N/N total time: {full['total_s'] / half['total_s']:.2f} wall, "
          f"{full['cpu_total_s'] / half['cpu_total_s']:.2f} CPU (linear in pairs: 2.00)")
    print(f"peak RSS of the probing process: {peak_mb:.0f} MB")
    print(f"projection, {proj['pairs']} pairs (GENEB sizes): linear "
          f"{proj['linear_solve_h_1core']:.1f} h + MLP {proj['mlp_solve_h_1core']:.1f} h "
          f"CPU, read/plan/write "
          f"{proj['read_plan_write_h']:.2f} h; 2 cores {proj['cpu_2cores_h']:.1f} h; "
          f"one GPU (projection) {proj['gpu_projection_h']:.1f} h")
    if args.json:
        def _keys(o):  # tuple keys of mlp_work for JSON
            if isinstance(o, dict):
                return {"/".join(k) if isinstance(k, tuple) else k: _keys(v) for k, v in o.items()}
            return o
        args.json.write_text(json.dumps(_keys({"half": half, "full": full, "model": model,
                                               "projection": proj, "gemm_gflops": gflops,
                                               "peak_rss_mb": peak_mb}), indent=2))


if __name__ == "__main__":
    main()
