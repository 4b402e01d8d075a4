"""Subsampling stability: probe MCC against the size of the training subsample.

GENEB caps a train split at ``TRAIN_ROW_CAP`` (100,000) rows and states that MCC has
stabilised by then. This module checks that claim on stored embeddings: for one (model, task)
it fits the linear probe (Cs, backend and standardisation as in ``geneb probe``) on stratified
subsamples of several sizes up to the cap, the same seeds at every size, and scores each on
the whole test split.

- Subsamples are drawn by :func:`geneb.protocol.full_rows` (the cap's own stratified,
  largest-remainder allocation) with an RNG of (task, ``subsample-<size>``, seed): a seed gives
  a different draw at each size, and the same draw for every model.
- Default sizes: 1/8, 1/4, 1/2 and all of the cap (:data:`DEFAULT_FRACTIONS`); only tasks
  whose train split is above the cap need the study (:func:`default_sizes` says so).
- Stabilised (:func:`stability_summary`): the mean MCC over seeds at the largest size differs
  from that at the next smaller size by at most ``tol`` (default 0.01 MCC).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from geneb.constraints import (
    BACKEND,
    BOOL,
    C_VALUE,
    POSITIVE_INT,
    SEED,
    Interval,
    ListOf,
    validate_params,
)
from geneb.errors import ProbeError
from geneb.probe.metrics import compute_metrics
from geneb.protocol import DEFAULT_C, MAX_ITER, TRAIN_ROW_CAP, full_rows

DEFAULT_FRACTIONS: tuple[float, ...] = (0.125, 0.25, 0.5, 1.0)
STABLE_TOL = 0.01
CURVE_COLUMNS = ["model", "task", "n_train", "size", "seed", "C", "mcc"]
#: ``subsample_curve``'s parameters, checked before any work (and ``geneb probe-subsample``'s
#: options: the command validates with these before its first pair).
SUBSAMPLE_PARAMS = {
    "sizes": ListOf(POSITIVE_INT, unique=True),
    "seeds": ListOf(SEED, unique=True),
    "Cs": ListOf(C_VALUE, unique=True),
    "backend": BACKEND,
    "standardize": BOOL,
}
#: The largest change of the mean MCC between the two largest sizes still called stable.
TOL = Interval(float, 0, None, closed="neither")


def default_sizes(n_train: int, cap: int = TRAIN_ROW_CAP) -> list[int]:
    """The subsample sizes for a train split of ``n_train`` rows; [] when it is not above
    the cap (nothing was subsampled, so there is nothing to check)."""
    if n_train <= cap:
        return []
    return [int(round(f * cap)) for f in DEFAULT_FRACTIONS]


def check_sizes(sizes: Sequence[int], n_train: int, n_classes: int) -> list[int]:
    """Sorted distinct sizes, each at least one row per class and at most ``n_train``."""
    out = sorted({int(s) for s in sizes})
    if not out:
        raise ProbeError("subsample sizes: expected at least one size, got none")
    bad = [s for s in out if s < n_classes or s > n_train]
    if bad:
        raise ProbeError(
            f"subsample sizes: expected sizes between {n_classes} (one row per class) and "
            f"{n_train} (the train rows), got {bad}"
        )
    return out


@validate_params(SUBSAMPLE_PARAMS)
def subsample_curve(
    store_path: str,
    model: str,
    task: str,
    sizes: Sequence[int],
    seeds: Sequence[int],
    *,
    Cs: Sequence[float] = DEFAULT_C,  # noqa: N803 - C is the conventional name
    backend: str = "auto",
    standardize: bool = False,
) -> pd.DataFrame:
    """MCC of the linear probe per (size, seed, C); columns :data:`CURVE_COLUMNS`."""
    from geneb.probe.plan import inspect_pair
    from geneb.probe.solvers import get_backend, resolve_backend
    from geneb.probe.solvers.base import ProbeFit, ProbeProblem
    from geneb.store import FeatureStore

    fs = FeatureStore(store_path, "r")
    pair = inspect_pair(fs, model, task)
    sizes = check_sizes(sizes, len(pair.labels), pair.n_classes)
    solver = get_backend(resolve_backend(backend, "linear"))
    tr, te = fs.get(model, task, "train"), fs.get(model, task, "test")
    problem = ProbeProblem(
        X_train=np.ascontiguousarray(tr.embeddings, dtype=np.float32),
        y_train=np.asarray(tr.labels, dtype=np.int64),
        X_test=np.ascontiguousarray(te.embeddings, dtype=np.float32),
        n_classes=pair.n_classes,
        standardize=standardize,
        max_iter=MAX_ITER,
    )
    fits, keys = [], []
    for size in sizes:
        for seed in seeds:
            sample = full_rows(
                pair.labels, pair.rows, task_fingerprint=pair.task_fp,
                n_classes=pair.n_classes, cap=size, rng_name=f"subsample-{size}", seed=seed,
            )  # fmt: skip
            for C in Cs:
                fits.append(ProbeFit(regime="full", k=None, seed=int(seed), C=float(C),
                                     train_idx=sample.positions))  # fmt: skip
                keys.append((size, int(seed), float(C)))
    y_test = np.asarray(te.labels, dtype=np.int64)
    rows = []
    for (size, seed, C), res in zip(keys, solver.solve(problem, fits), strict=True):
        mcc = compute_metrics(y_test, res.class_proba(), pair.n_classes, y_pred=res.pred)["mcc"]
        rows.append((model, task, len(pair.labels), size, seed, C, float(mcc)))
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def check_curve_out(path: str | Path) -> Path:
    """Where a curve CSV may be written: not a folder, in a folder that exists (checked
    before any fit, so a long study never ends in a traceback)."""
    p = Path(path)
    if p.is_dir():
        raise ProbeError(f"out: {str(p)!r} is a folder; expected the path of a CSV file",
                         param="out")  # fmt: skip
    if not p.parent.is_dir():
        raise ProbeError(f"out: the folder {str(p.parent)!r} does not exist (expected an "
                         "existing folder for the CSV file)", param="out")  # fmt: skip
    return p


#: What each curve column must hold: (check, what the message says was expected).
_CURVE_RULES = {
    "n_train": (lambda v: v.is_integer() and v >= 1, "a whole number >= 1"),
    "size": (lambda v: v.is_integer() and v >= 1, "a whole number >= 1"),
    "seed": (lambda v: v.is_integer() and v >= 0, "a whole number >= 0"),
    "C": (lambda v: 0 < v < np.inf, "a number > 0"),
    "mcc": (lambda v: -1.0 <= v <= 1.0, "a number between -1 and 1"),
}


def read_curve(path: str | Path) -> pd.DataFrame:
    """A curve CSV written by ``geneb probe-subsample --out``, checked before any work: every
    cell (whole sizes and seeds, sizes at most ``n_train``, MCC in [-1, 1], C > 0) and no
    (model, task, size, seed, C) twice; a bad cell is one line naming the file's line."""
    p = Path(path)
    if not p.is_file():
        raise ProbeError(f"no subsampling curve at {str(p)!r}")
    try:
        df = pd.read_csv(p, dtype=str, keep_default_na=False, index_col=False)
    except Exception as e:  # pandas raises several types on malformed csv
        raise ProbeError(f"{p}: not a readable CSV file: {e}") from e
    missing = [c for c in CURVE_COLUMNS if c not in df.columns]
    if missing:
        raise ProbeError(
            f"{p}: missing column(s) {', '.join(missing)}; expected the columns "
            f"{','.join(CURVE_COLUMNS)} (geneb probe-subsample --out)"
        )
    df = df[CURVE_COLUMNS].copy()
    for col, (ok, expected) in _CURVE_RULES.items():
        num = pd.to_numeric(df[col], errors="coerce").astype(float)
        good = num.map(lambda v, ok=ok: bool(np.isfinite(v) and ok(float(v))))
        if not good.all():
            i = int(np.flatnonzero(~good.to_numpy())[0])
            raise ProbeError(f"{p}: line {i + 2}: {col} must be {expected}, got "
                             f"{df[col].iloc[i]!r}")  # fmt: skip
        df[col] = num.astype(int) if col in ("n_train", "size", "seed") else num
    _check_curve_rows(p, df)
    return df


def _check_curve_rows(p: Path, df: pd.DataFrame) -> None:
    over = np.flatnonzero((df["size"] > df["n_train"]).to_numpy())
    if len(over):
        i = int(over[0])
        raise ProbeError(f"{p}: line {i + 2}: size {df['size'].iloc[i]} is above n_train "
                         f"{df['n_train'].iloc[i]} (a subsample of the train rows)")  # fmt: skip
    empty = np.flatnonzero(((df["model"].str.strip() == "") | (df["task"].str.strip() == ""))
                           .to_numpy())  # fmt: skip
    if len(empty):
        raise ProbeError(f"{p}: line {int(empty[0]) + 2}: empty model or task")
    dup = np.flatnonzero(df.duplicated(["model", "task", "size", "seed", "C"]).to_numpy())
    if len(dup):
        i = int(dup[0])
        r = df.iloc[i]
        raise ProbeError(f"{p}: line {i + 2}: ({r['model']}, {r['task']}, size {r['size']}, "
                         f"seed {r['seed']}, C {r['C']:g}) appears twice; one fit per size, "
                         "seed and C")


@validate_params({"tol": TOL})
def stability_summary(curve: pd.DataFrame, tol: float = STABLE_TOL) -> pd.DataFrame:
    """Per (model, task, C, size): n_seeds, mean and sd of MCC, the change of the mean from
    the next smaller size, and ``stabilised`` (on the largest size's row: change <= ``tol``)."""
    g = curve.groupby(["model", "task", "C", "size"], sort=True)["mcc"]
    out = g.agg(n_seeds="count", mean_mcc="mean", sd_mcc="std").reset_index()
    out["change"] = out.groupby(["model", "task", "C"])["mean_mcc"].diff()
    last = out.groupby(["model", "task", "C"])["size"].transform("max") == out["size"]
    out["stabilised"] = np.where(
        last & out["change"].notna(), out["change"].abs() <= tol, None
    )
    return out
