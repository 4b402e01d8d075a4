"""The steps of ``gpu_check.py``: a CPU reference step, then checks on the device.

``reference(refs, size)`` computes on the CPU what every check compares against and writes it
to the folder ``refs`` (git-ignored; carried to the GPU machine with the run, never
committed). ``run_checks(refs, device)`` repeats the work on ``device`` and returns one
result per check: ``{"check", "ok", ...measurements}``; a check that raises is a failed check.

Tolerances exclude tie noise: exact ties are snapped to exact ties by every linear backend
(``geneb.probe.solvers.fast.snap_ties``), so probabilities are compared directly
(``PROBA_TOL``) and an argmax may differ only on a row whose reference margin is within it.
``converged`` is each backend's float64 gradient test at geneb's tolerance (cuML's included:
geneb judges it on the host), so "converged wherever the reference converged" is the gradient
check.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from gpu_check_real_size import check_real_size, reference_real_size

#: max |p - p_ref| of test-set probabilities. Two solvers that both meet the gradient
#: tolerance 1e-8 agree to ~1e-6 on well-posed fits (fast vs torch, n = 20,000, d = 511,
#: K = 3: 9.4e-7), less where n < d and C is large (gue_mouse_0 k-mer 5, 600 rows, 1,024
#: features, C = 10: 4.8e-5, both converged); a wrong solve or a float32 one is off by
#: 1e-3 and more.
PROBA_TOL = 1e-4
#: per-row max |emb - ref| / RMS(ref) of extraction against the CPU float32 reference:
#: float32 (TF32 off, geneb.models.device.tf32): summation order only; bfloat16: weights and
#: activations rounded to 8 bits of mantissa (2**-8 = 0.4% per rounding, a few roundings deep)
EMB_TOL = {"float32": 1e-4, "bfloat16": 2.0**-4}
#: memory left allocated after N pairs beyond what the first pair left (allocator slack)
LEFTOVER_TOL_MIB = {"cuda": 1.0, "cpu": 64.0}
SIZES = {  # what each step computes: the dry run's and the GPU run's
    "small": dict(n_train=600, seeds=(13, 17), Cs=(0.1, 10.0), engine_rows=240, pairs=3,
                  memory_pairs=4, memory_n=3000, memory_d=127),
    "gpu": dict(n_train=None, seeds=(13, 17, 42, 123, 997), Cs=(0.01, 0.1, 1.0, 10.0, 100.0),
                engine_rows=2000, pairs=4, memory_pairs=8, memory_n=30000, memory_d=1023),
}
TINY_MODEL = "tiny/tiny-bert-dnabert1-6mer"
SEQS = ["ACGTAGCATCGGATCTATCTATCGACACTTGGTTATCG", "TTGACA" * 6, "GATTACAGATTACA",
        "CCGGTTAAACGTACGGGATCCATTTAGACAGATTTGACCA", "ACGTACGTAC" * 3]


# ------------------------------------------------------------------ data
def linear_data(data_dir: Path | None, n_train: int | None, seed: int = 0
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str]:
    """k-mer 5 spectra of gue_mouse_0 when the task folder is there, else a synthetic
    3-class problem of the same shape; (X_train, y_train, X_test, y_test, name)."""
    folder = data_dir / "gue_mouse_0" if data_dir else None
    if folder is not None and (folder / "train.csv").exists():
        import pandas as pd

        from geneb.models.adapters.kmer import kmer_spectrum

        tr, te = pd.read_csv(folder / "train.csv"), pd.read_csv(folder / "test.csv")
        if n_train:
            tr = tr.iloc[:n_train]
        return (kmer_spectrum(tr.sequence.tolist(), 5), tr.label.to_numpy(np.int64),
                kmer_spectrum(te.sequence.tolist(), 5), te.label.to_numpy(np.int64),
                "gue_mouse_0 k-mer 5")
    rng = np.random.default_rng(seed)
    n = n_train or 6000
    y = np.arange(n) % 3
    X = (rng.normal(size=(n, 64)) + 0.4 * y[:, None]).astype(np.float32)
    yt = np.arange(400) % 3
    Xt = (rng.normal(size=(400, 64)) + 0.4 * yt[:, None]).astype(np.float32)
    return X, y, Xt, yt, "synthetic 3-class"


def grid(y: np.ndarray, seeds: tuple[int, ...], Cs: tuple[float, ...]) -> list[Any]:
    """The GENEB grid of one pair: 1- and 10-shot draws per seed, and full data, x C."""
    from geneb.probe.solvers.base import ProbeFit

    K = int(y.max()) + 1
    fits = []
    for k in (1, 10):
        for seed in seeds:
            rng = np.random.default_rng(seed)
            idx = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), k, replace=False)
                                          for c in range(K)]))
            fits += [ProbeFit(str(k), k, seed, C, idx) for C in Cs]
    fits += [ProbeFit("full", None, seeds[0], C, np.arange(len(y))) for C in Cs]
    return fits


def write_store(path: Path, rows: int, pairs: int) -> None:
    """A store of ``pairs`` synthetic (model, task) pairs (2 and 3 classes), written with the
    store's own writer."""
    from geneb.store import FeatureStore, StoreKey
    from geneb.store.provenance import Provenance

    fs = FeatureStore(path, "a")
    rng = np.random.default_rng(7)
    for t in range(pairs):
        K = 2 + t % 2
        for split, n in (("train", rows), ("test", rows // 3)):
            y = np.arange(n) % K
            X = (rng.normal(size=(n, 48)) + 0.5 * y[:, None]).astype(np.float32)
            prov = Provenance(model_id="m", revision="gpu-check", task_id=f"t{t}",
                              task_fingerprint=f"gpu-check:t{t}:{split}", adapter="gpu-check")
            key = StoreKey("m", f"t{t}", split)
            with fs.writer(key, provenance=prov, labels=y, rows=np.arange(n), dim=48) as w:
                w.append(X)


# ------------------------------------------------------------------ the CPU reference step
def reference(refs: Path, size: str, data_dir: Path | None, models_dir: Path | None) -> dict:
    """Compute and write every reference (CPU, float64 exact solvers, float32 extraction)."""
    from geneb.probe.engine import run_probes
    from geneb.probe.solvers import get_backend
    from geneb.probe.solvers.base import ProbeProblem
    from geneb.results.table import read_results

    cfg = dict(SIZES[size], size=size)
    refs.mkdir(parents=True, exist_ok=True)
    X, y, Xt, yt, name = linear_data(data_dir, cfg["n_train"])
    fits = grid(y, cfg["seeds"], cfg["Cs"])
    prob = ProbeProblem(X, y, Xt, int(y.max()) + 1, standardize=True)
    t0 = time.perf_counter()
    res = get_backend("fast").solve(prob, fits)
    np.savez(refs / "linear.npz", X=X, y=y, Xt=Xt, yt=yt,
             proba=np.stack([r.proba for r in res]),
             converged=np.array([r.converged for r in res]))
    cfg.update(linear_data=name, linear_seconds=time.perf_counter() - t0)
    with tempfile.TemporaryDirectory() as tmp:
        write_store(Path(tmp) / "s", cfg["engine_rows"], cfg["pairs"])
        run_probes(Path(tmp) / "s", Path(tmp) / "r", shots="1,10,full", seeds=cfg["seeds"][:2],
                   Cs=cfg["Cs"][:2], backend="fast", workers=1)
        df = read_results(Path(tmp) / "r")
        df[["task", "regime", "seed", "C", "mcc", "n_test"]].to_json(refs / "engine.json")
    if models_dir is not None and (models_dir / TINY_MODEL).is_dir():
        from geneb.models.registry import get_embedder

        dst = refs / "tiny_model"
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(models_dir / TINY_MODEL, dst, copy_function=shutil.copyfile)
        dst.chmod(0o755)  # the shared folder is read-only; a rerun replaces the copy
        emb = get_embedder(str(refs / "tiny_model"), device="cpu", dtype="float32")
        np.save(refs / "extract.npy", emb.embed(SEQS))
        cfg["extract"] = True
    cfg.update(reference_real_size(refs, size))
    (refs / "config.json").write_text(json.dumps(cfg, default=list))
    return cfg


# ------------------------------------------------------------------ the checks
def check_linear(refs: Path, device: str, inject: bool) -> list[dict]:
    """Every linear backend that runs on ``device`` against the reference probabilities."""
    from geneb.probe.solvers import get_backend
    from geneb.probe.solvers.base import ProbeProblem
    from geneb.probe.solvers.cuml_backend import cuml_available

    cfg = json.loads((refs / "config.json").read_text())
    d = np.load(refs / "linear.npz")
    ref_p = d["proba"] + (1e-3 if inject else 0.0)
    fits = grid(d["y"], tuple(cfg["seeds"]), tuple(cfg["Cs"]))
    prob = ProbeProblem(d["X"], d["y"], d["Xt"], int(d["y"].max()) + 1, standardize=True)
    names = ["torch"] + (["cuml"] if device.startswith("cuda") and cuml_available() else [])
    out = []
    for name in names:
        backend = get_backend(name, device=device) if name == "torch" else get_backend(name)
        backend.solve(prob, fits[:2])  # warm-up: CUDA context, kernels
        t0 = time.perf_counter()
        res = backend.solve(prob, fits)
        secs = time.perf_counter() - t0
        got = np.stack([r.proba for r in res])
        dp = np.abs(got - ref_p).max(axis=(1, 2))
        top2 = np.sort(ref_p, axis=-1)[..., -2:]
        decided = (top2[..., 1] - top2[..., 0]) > 2 * PROBA_TOL
        flips = int(((got.argmax(-1) != ref_p.argmax(-1)) & decided).sum())
        unconverged = [i for i, r in enumerate(res) if d["converged"][i] and not r.converged]
        out.append({"check": f"linear {name}", "ok": bool(dp.max() <= PROBA_TOL and not flips
                                                          and not unconverged),
                    "data": cfg["linear_data"], "fits": len(fits), "seconds": round(secs, 2),
                    "max_abs_dproba": float(dp.max()), "decided_argmax_flips": flips,
                    "not_converged_where_reference_did": len(unconverged),
                    "reference_seconds": round(cfg["linear_seconds"], 2)})
    return out


def check_engine(refs: Path, device: str, inject: bool) -> dict:
    """``run_probes(backend="auto", workers=2)`` end to end against the reference rows."""
    import pandas as pd

    from geneb.probe.engine import run_probes
    from geneb.results.table import read_results

    cfg = json.loads((refs / "config.json").read_text())
    ref = pd.read_json(refs / "engine.json")
    if inject:
        ref["mcc"] += 0.1  # a wrong number, beyond what one flipped test row explains
    with tempfile.TemporaryDirectory() as tmp:
        write_store(Path(tmp) / "s", cfg["engine_rows"], cfg["pairs"])
        t0 = time.perf_counter()
        summary = run_probes(Path(tmp) / "s", Path(tmp) / "r", shots="1,10,full",
                             seeds=cfg["seeds"][:2], Cs=cfg["Cs"][:2], backend="auto",
                             workers=2)
        secs = time.perf_counter() - t0
        got = read_results(Path(tmp) / "r")
    key = ["task", "regime", "seed", "C"]
    m = got.merge(ref, on=key, suffixes=("", "_ref"))
    one_flip = 2.5 / m["n_test"]  # an MCC change one test row can make, at most about
    bad = m[(m["mcc"] - m["mcc_ref"]).abs() > np.maximum(1e-9, one_flip)]
    return {"check": "engine auto, 2 workers", "ok": bool(len(m) == len(ref) == len(got)
                                                         and bad.empty
                                                         and got["converged"].all()),
            "backend": summary.backend, "rows": len(got), "seconds": round(secs, 2),
            "cells_off": ["/".join(map(str, r)) for r in bad[key].itertuples(index=False)][:10]}


def check_extract(refs: Path, device: str, inject: bool) -> list[dict]:
    """A tiny model extracted on ``device`` in float32 and bfloat16 against the CPU float32
    embeddings; the provenance's dtype and batch policy."""
    from geneb.models.registry import get_embedder

    if not (refs / "extract.npy").exists():
        return [{"check": "extract", "ok": False, "why": "no tiny model in the references"}]
    ref = np.load(refs / "extract.npy").astype(np.float64) * (1.01 if inject else 1.0)
    rms = np.sqrt((ref * ref).mean(axis=1))
    out = []
    for dtype in ("float32", "bfloat16"):
        emb = get_embedder(str(refs / "tiny_model"), device=device, dtype=dtype)
        got = emb.embed(SEQS).astype(np.float64)
        err = float((np.abs(got - ref).max(axis=1) / rms).max())
        info = emb.info
        out.append({"check": f"extract {dtype}", "ok": bool(err <= EMB_TOL[dtype]
                                                            and info.dtype == dtype),
                    "device": info.device, "rel_error": err, "tolerance": EMB_TOL[dtype],
                    "provenance_dtype": info.dtype,
                    "batch_policy": info.extra.get("batch_invariance", {}).get("mode")})
        del emb
    return out


def _allocated_mib(device: str) -> float:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
        return torch.cuda.memory_allocated() / 2**20
    with open("/proc/self/statm") as f:  # resident pages
        import os

        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def check_memory(refs: Path, device: str, inject: bool) -> dict:
    """Peak and leftover memory of the torch backend after N multi-class full-data pairs."""
    from geneb.probe.solvers import get_backend
    from geneb.probe.solvers.base import ProbeFit, ProbeProblem

    cfg = json.loads((refs / "config.json").read_text())
    n, dim, N = cfg["memory_n"], cfg["memory_d"], cfg["memory_pairs"]
    backend = get_backend("torch", device=device)
    cuda = device.startswith("cuda")
    if cuda:
        import torch

        torch.cuda.reset_peak_memory_stats()
    left = []
    rng = np.random.default_rng(3)
    for i in range(N):
        y = np.arange(n) % 3
        X = (rng.normal(size=(n, dim)) + 0.3 * y[:, None]).astype(np.float32)
        prob = ProbeProblem(X, y, X[:200], 3, standardize=True)
        res = backend.solve(prob, [ProbeFit("full", None, 13, 1.0, np.arange(n))])
        assert res[0].converged, f"memory pair {i} did not converge"
        del X, prob, res
        left.append(_allocated_mib(device))
    growth = left[-1] - left[0] + (1e6 if inject else 0.0)
    kind = "cuda" if cuda else "cpu"
    peak = torch.cuda.max_memory_allocated() / 2**20 if cuda else None
    return {"check": f"memory after {N} pairs", "ok": bool(growth <= LEFTOVER_TOL_MIB[kind]),
            "pair": f"n={n} d={dim} K=3 full data", "leftover_mib": [round(v, 1) for v in left],
            "growth_mib": round(growth, 2), "peak_mib": peak}


CHECKS = {"linear": check_linear, "engine": check_engine, "extract": check_extract,
          "memory": check_memory, "real_size": check_real_size}


def run_checks(refs: Path, device: str, inject: str | None = None) -> list[dict]:
    """Every check (``CHECKS``) on ``device``; ``inject``: the check whose reference is
    perturbed (to see the script fail). A check that raises is reported failed."""
    out: list[dict] = []
    for name, fn in CHECKS.items():
        t0 = time.perf_counter()
        try:
            got = fn(refs, device, inject == name)
            rows = got if isinstance(got, list) else [got]
        except Exception as e:  # noqa: BLE001 - a failed check, reported, never hidden
            rows = [{"check": name, "ok": False, "error": f"{type(e).__name__}: {e}"[:500]}]
        for r in rows:
            r.setdefault("check_seconds", round(time.perf_counter() - t0, 2))
            print(json.dumps(r, default=str), flush=True)
        out += rows
    return out
