"""GPU check: torch-cuda (batched Newton) and cuML against scikit-learn on real k-mer tasks.

Prepared to run in one short call on a GPU machine (no store, no network): k-mer spectra are
computed from the task folders, every backend solves the same GENEB grid (1/10/full x seeds
x C, standardised), and per-cell MCC differences against the sklearn backend (converged,
float64) are printed with wall times. Backends that cannot be imported are reported and
skipped.

    python benchmarks/gpu_check.py --data-dir ../shared/data \
        --tasks gue_mouse_0,gue_splice_reconstructed --seeds 13,17 --Cs 0.01,1,100 [--mlp]

``--cuda-families`` checks the CUDA-only families instead (the catalogue's ``cuda_packages``:
Caduceus/PlantCaduceus ``mamba-ssm``, Evo 1 ``flash-attn``, Evo 2 ``evo2``): per package, one
JSON line with whether it imports, its kernel against a plain-torch reference on random
inputs (no weights: the hub is unreachable from the GPU machine, so the real checkpoints are
not run), and what geneb's readiness check says for the first model that needs it.

    python benchmarks/gpu_check.py --cuda-families [--json out.json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]


def grid_cells(y: np.ndarray, K: int, seeds, Cs):
    from geneb.probe.solvers.base import ProbeFit

    cells = []
    for k in (1, 10):
        for seed in seeds:
            rng = np.random.default_rng(seed)
            idx = np.sort(np.concatenate(
                [rng.choice(np.flatnonzero(y == c), k, replace=False) for c in range(K)]))
            cells += [ProbeFit(str(k), k, seed, C, idx) for C in Cs]
    for seed in seeds:
        cells += [ProbeFit("full", None, seed, C, np.arange(len(y))) for C in Cs]
    return cells


def _kernel_mamba_ssm() -> float:
    """mamba_ssm's CUDA selective scan against its own pure-torch reference."""
    import torch
    from mamba_ssm.ops.selective_scan_interface import selective_scan_fn, selective_scan_ref

    g = torch.Generator(device="cuda").manual_seed(0)
    b, d, n, L = 2, 32, 8, 64

    def r(*shape):
        return torch.randn(*shape, device="cuda", generator=g)

    args = (r(b, d, L), torch.rand(b, d, L, device="cuda", generator=g),
            -torch.rand(d, n, device="cuda", generator=g), r(b, n, L), r(b, n, L), r(d))
    return float((selective_scan_fn(*args) - selective_scan_ref(*args)).abs().max())


def _kernel_flash_attn() -> float:
    """flash_attn's causal attention against torch's scaled_dot_product_attention (bf16)."""
    import torch
    from flash_attn import flash_attn_func

    q, k, v = torch.randn(3, 2, 128, 4, 64, device="cuda", dtype=torch.bfloat16).unbind(0)
    ref = torch.nn.functional.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True).transpose(1, 2)
    return float((flash_attn_func(q, k, v, causal=True) - ref).abs().max())


KERNELS = {"mamba_ssm": _kernel_mamba_ssm, "flash_attn": _kernel_flash_attn}
ALSO_IMPORT = {"evo2": ("vortex",)}  # Evo 2 runs on the vortex kernels it installs


def cuda_families() -> list[dict]:
    """One row per CUDA-only package of the catalogue (see module doc)."""
    import torch

    from geneb.errors import GenebError
    from geneb.models.catalogue import load_catalogue
    from geneb.models.cuda_only import module_of
    from geneb.models.registry import check_spec

    by_pkg: dict[str, list[str]] = {}
    for e in load_catalogue():
        for p in e.cuda_packages or ():
            by_pkg.setdefault(p, []).append(e.name)
    rows = []
    for pkg, models in by_pkg.items():
        row: dict = {"package": pkg, "models": models, "cuda": torch.cuda.is_available(),
                     "weights": "not run: the hub is unreachable from this machine"}
        for mod in (module_of(pkg), *ALSO_IMPORT.get(module_of(pkg), ())):
            try:
                m = importlib.import_module(mod)
                row[f"import {mod}"] = f"ok {getattr(m, '__version__', '')}".strip()
            except Exception as e:  # noqa: BLE001 - reported, not raised
                row[f"import {mod}"] = f"failed: {type(e).__name__}: {str(e)[:200]}"
        kernel = KERNELS.get(module_of(pkg))
        if kernel is not None and row["cuda"] and row[f"import {module_of(pkg)}"][:2] == "ok":
            try:
                row["kernel_max_abs_diff_vs_reference"] = kernel()
            except Exception as e:  # noqa: BLE001
                row["kernel"] = f"failed: {type(e).__name__}: {str(e)[:200]}"
        try:
            check_spec(models[0], trust_remote_code=True)
            row["geneb_check_spec"] = "ready"
        except GenebError as e:
            row["geneb_check_spec"] = str(e)
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main() -> None:
    from sklearn.metrics import matthews_corrcoef

    from geneb.models.adapters.kmer import kmer_spectrum
    from geneb.probe.solvers import get_backend
    from geneb.probe.solvers.base import ProbeProblem

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default=os.environ.get("GENEB_DATA_DIR")
                    or str(REPO.parent / "shared" / "data"))
    ap.add_argument("--tasks", default="gue_mouse_0,gue_splice_reconstructed")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seeds", default="13,17,42,123,997")
    ap.add_argument("--Cs", default="0.01,0.1,1,10,100")
    ap.add_argument("--backends", default="sklearn,fast,torch-cuda,cuml")
    ap.add_argument("--json")
    ap.add_argument("--cuda-families", action="store_true",
                    help="check the CUDA-only families' packages and kernels instead")
    ap.add_argument("--mlp", action="store_true",
                    help="also time the torch MLP probe on CUDA (benchmarks/mlp_probe.py "
                         "--device cuda: time per pair, projected study hours, MCC vs sklearn)")
    args = ap.parse_args()
    if args.cuda_families:
        rows = cuda_families()
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
        return
    if args.mlp:
        import subprocess
        import sys

        subprocess.run([sys.executable, str(REPO / "benchmarks" / "mlp_probe.py"), "--device",
                        "cuda", "--data-dir", args.data_dir, "--k", str(args.k)], check=False)
    seeds = [int(s) for s in args.seeds.split(",")]
    Cs = [float(c) for c in args.Cs.split(",")]
    report = []
    for task in args.tasks.split(","):
        d = Path(args.data_dir) / task
        tr, te = pd.read_csv(d / "train.csv"), pd.read_csv(d / "test.csv")
        Xtr = kmer_spectrum(tr.sequence.tolist(), args.k)
        Xte = kmer_spectrum(te.sequence.tolist(), args.k)
        ytr, yte = tr.label.to_numpy(np.int64), te.label.to_numpy(np.int64)
        K = int(max(ytr.max(), yte.max()) + 1)
        prob = ProbeProblem(Xtr, ytr, Xte, K, standardize=True)
        cells = grid_cells(ytr, K, seeds, Cs)
        mccs: dict[str, np.ndarray] = {}
        for name in args.backends.split(","):
            try:
                backend = (get_backend("torch", device="cuda") if name == "torch-cuda"
                           else get_backend(name))
            except Exception as e:  # noqa: BLE001 - report any import/device failure and go on
                print(f"[{task}] {name}: unavailable ({e})", flush=True)
                continue
            if name == "torch-cuda":  # warm up CUDA context and kernels once
                backend.solve(prob, cells[:2])
            t0 = time.perf_counter()
            fits = backend.solve(prob, cells)
            secs = time.perf_counter() - t0
            mccs[name] = np.array([matthews_corrcoef(yte, f.proba.argmax(1)) for f in fits])
            row = {"task": task, "backend": name, "cells": len(cells), "seconds": secs,
                   "not_converged": int(sum(not f.converged for f in fits))}
            if "sklearn" in mccs and name != "sklearn":
                diff = np.abs(mccs[name] - mccs["sklearn"])
                row["max_dmcc_vs_sklearn"] = float(diff.max())
                row["cells_over_0.005"] = [f"{c.regime}/seed{c.seed}/C={c.C:g}:{x:.4f}"
                                           for c, x in zip(cells, diff, strict=True) if x > 5e-3]
            report.append(row)
            print(json.dumps(row), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
