"""The probe engine: plan the GENEB grid from the store, solve it (in-process or on Dask), and
keep the results table up to date after every finished (model, task).

How work flows:

1. Planning (driver, cheap): for every (model, task) pair read only the store attributes,
   labels and row indices; draw the train rows of each (regime, seed) cell; drop cells already
   in the results table; fan full-regime cells out from an existing row of another seed when
   one exists. Identical fits (same train rows, C, probe, standardise flag) are solved once.
2. Checks before any work: unknown names, missing or incomplete entries, NaN/inf embeddings,
   classes with < k rows. Nothing is written when one fails.
3. Solving: one job per (model, task). The job reads that pair's embeddings from the store
   itself (the store is on a shared file system), so each matrix reaches a worker exactly once
   and nothing large travels through the scheduler; it solves every cell of the pair in one
   backend call (so a backend can batch them) with BLAS pinned to one thread.
4. After each job the table is rewritten atomically: a killed run keeps every finished pair.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from geneb.errors import EntryIncompleteError, GenebError, ProbeError, StoreError, unknown_name
from geneb.probe import protocol
from geneb.probe.metrics import compute_metrics
from geneb.probe.results import cell_id, merge_into, read_table, rows_to_table
from geneb.probe.schema import DEFAULT_SEEDS, MAX_ITER, RESULTS_SCHEMA_VERSION
from geneb.probe.solvers.base import ProbeCell, ProbeProblem
from geneb.store import FeatureStore, StoreEntry, StoreKey

log = logging.getLogger(__name__)

PROBES: tuple[str, ...] = ("linear", "mlp")
UNCATEGORIZED = "uncategorized"


@dataclass(frozen=True)
class ProbeRunSummary:
    """What one ``run_probes`` call did."""

    out: Path
    backend: str  # resolved backend name ("sklearn" for the MLP probe)
    n_cells: int  # cells the request spans
    n_skipped: int  # already in the results table: not recomputed
    n_reused: int  # full-regime cells copied from the same fit of another seed in the table
    n_computed: int  # new rows written from fits solved in this run
    n_fits: int  # distinct fits solved (identical cells share one fit)
    n_groups: int  # (model, task) jobs run
    seconds: float


@dataclass(frozen=True, eq=False)
class FitJob:
    """One distinct fit of a (model, task) job: the rows (positions), C and seed to use."""

    fit_id: int
    regime: str
    k: int | None
    seed: int
    C: float | None
    positions: np.ndarray


@dataclass(eq=False)
class _Pair:
    """What planning knows about one (model, task): attributes, labels, rows, no embeddings."""

    model: str
    task: str
    labels: np.ndarray
    rows: np.ndarray
    n_test: int
    n_classes: int
    dim: int
    task_fp: str
    store_fp: str
    n_params: int | None
    category: str
    synthetic: bool
    fits: list[FitJob] = field(default_factory=list)
    cells: list[tuple[dict[str, Any], int]] = field(default_factory=list)  # (row base, fit_id)


# --------------------------------------------------------------------------- helpers
def _entry_attrs(store: FeatureStore, model: str, task: str, split: str) -> dict[str, Any]:
    """The entry's attributes; a clear error when it is missing or incomplete."""
    key = StoreKey(model, task, split)
    status = store.status(key)
    if status == "missing":
        have = sorted(k.split for k in store.keys() if k.model == model and k.task == task)
        raise ProbeError(
            f"store {store.path} has no {split!r} split for model {model!r} on task {task!r} "
            f"(it has: {', '.join(have) or 'nothing'}); probing needs both train and test: "
            f"extract the {split} split first"
        )
    attrs = store.entry_attrs(key) or {}
    if status == "incomplete":
        raise EntryIncompleteError(
            f"store entry {key} in {store.path} is incomplete ({attrs.get('rows_written', 0)} "
            f"of {attrs.get('n_rows', '?')} rows written); finish the extraction first"
        )
    return attrs


def _check_finite(store: FeatureStore, model: str, task: str, split: str) -> StoreEntry:
    """Name the first non-finite value before any work (one fast whole-entry read); return
    the entry (an in-process solve reuses it instead of reading it again)."""
    e = store.get(model, task, split)
    bad = ~np.isfinite(e.embeddings)
    if bad.any():
        r, c = (int(v) for v in np.argwhere(bad)[0])
        raise ProbeError(
            f"store entry {e.key} in {store.path} has a non-finite embedding "
            f"({e.embeddings[r, c]}) at entry row {r} (task file row {int(e.rows[r])}), "
            f"feature {c}; re-extract it (check the model's dtype); nothing was probed"
        )
    return e


def _labels_fingerprint(labels: np.ndarray, rows: np.ndarray) -> str:
    h = hashlib.sha256(np.ascontiguousarray(labels, np.int64).tobytes())
    h.update(np.ascontiguousarray(rows, np.int64).tobytes())
    return "labels-sha256:" + h.hexdigest()


def _inspect_pair(store: FeatureStore, model: str, task: str) -> _Pair:
    a_tr = _entry_attrs(store, model, task, "train")
    _entry_attrs(store, model, task, "test")
    key = StoreKey(model, task, "train")
    # labels and rows only (the embeddings are read once, for the finite check); local
    # stores read them without zarr
    labels, rows, dim_tr = store.labels_rows(model, task, "train")
    y_test, _, dim_te = store.labels_rows(model, task, "test")
    labels = np.asarray(labels, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    y_test = np.asarray(y_test, dtype=np.int64)
    if dim_tr != dim_te:
        raise ProbeError(
            f"model {model!r} task {task!r}: train embeddings have {dim_tr} features but test "
            f"embeddings {dim_te}; re-extract one of them with the same settings"
        )
    for split, lab in (("train", labels), ("test", y_test)):
        if len(lab) and lab.min() < 0:
            raise ProbeError(f"store entry {model}/{task}/{split}: negative label {lab.min()}")
        if len(lab) == 0:
            raise ProbeError(f"store entry {model}/{task}/{split} has no rows")
    prov = store.provenance(key)
    extra = dict(prov.extra) if prov is not None and prov.extra else {}
    n_classes = int(extra.get("n_classes") or protocol.n_classes_of(labels, y_test))
    task_fp = (prov.task_fingerprint if prov is not None else "") or _labels_fingerprint(
        labels, rows
    )
    return _Pair(
        model=model,
        task=task,
        labels=labels,
        rows=rows,
        n_test=len(y_test),
        n_classes=n_classes,
        dim=dim_tr,
        task_fp=task_fp,
        store_fp=str(a_tr.get("entry_fingerprint", "")),
        n_params=prov.n_params if prov is not None else None,
        category=str(extra.get("task_category") or UNCATEGORIZED),
        synthetic=bool(extra.get("task_synthetic", False)),
    )


def _select_pairs(
    store: FeatureStore, models: Sequence[str] | None, tasks: Sequence[str] | None
) -> list[tuple[str, str]]:
    keys = store.keys()
    all_models = sorted({k.model for k in keys})
    all_tasks = sorted({k.task for k in keys})
    if not keys:
        raise StoreError(f"store {store.path} has no entries; run `geneb extract` first")
    for m in models or ():
        if m not in all_models:
            raise unknown_name("model in the store", m, all_models)
    for t in tasks or ():
        if t not in all_tasks:
            raise unknown_name("task in the store", t, all_tasks)
    present = {(k.model, k.task) for k in keys}
    ms = list(dict.fromkeys(models)) if models else all_models
    ts = list(dict.fromkeys(tasks)) if tasks else all_tasks
    pairs = [(m, t) for m in ms for t in ts if (m, t) in present]
    if models and tasks:  # every explicitly named pair must exist
        for m in ms:
            for t in ts:
                if (m, t) not in present:
                    have = sorted(t2 for (m2, t2) in present if m2 == m)
                    raise ProbeError(
                        f"store {store.path} has no embeddings of model {m!r} on task {t!r} "
                        f"(that model has: {', '.join(have)}); extract them first"
                    )
    if not pairs:
        raise ProbeError(f"nothing to probe: no (model, task) entries match in {store.path}")
    return pairs


def _versions() -> tuple[str, str]:
    import importlib.metadata as md

    from geneb import __version__

    return __version__, md.version("scikit-learn")


def _resolve_backend(backend: str, probe: str) -> str:
    """Check the backend can be built here (clear errors before any work); return its name."""
    from geneb.probe.solvers import BACKENDS, get_backend

    if probe == "mlp":
        from geneb.probe.mlp import resolve_mlp_backend

        return resolve_mlp_backend(backend)
    if backend == "auto":
        from geneb.probe.solvers.cuml_backend import cuml_available

        backend = "cuml" if cuml_available() else "fast"
    if backend not in BACKENDS:
        raise unknown_name("backend", backend, [*BACKENDS, "auto"])
    get_backend(backend)  # raises a GenebError naming what is missing
    return backend


# --------------------------------------------------------------------------- worker side
def solve_group(
    store_path: str,
    model: str,
    task: str,
    store_fp: str,
    n_classes: int,
    fits: Sequence[FitJob],
    probe: str,
    backend: str,
    standardize: bool,
    blas_threads: int | None = 1,
    fit_threads: int | None = None,
    entries: tuple[StoreEntry, StoreEntry] | None = None,
) -> list[dict[str, Any]]:
    """Solve every fit of one (model, task); runs in a Dask worker or in-process.

    Reads the pair's embeddings from the store here (never shipped through the scheduler; a
    fresh, aligned array) and returns only small per-fit dicts: metrics, n_iter, converged.
    In-process runs pass the (train, test) ``entries`` the finite check already read instead
    of reading them twice, and may give the ``fast`` backend's full-data fits ``fit_threads``
    cores (the cores the run was given) for their bit-reproducible parallel steps; everything
    else keeps ``blas_threads``.
    """
    from threadpoolctl import threadpool_limits

    from geneb.probe.solvers import get_backend

    with threadpool_limits(limits=blas_threads):
        if entries is None:
            fs = FeatureStore(store_path, "r")
            tr = fs.get(model, task, "train")
            te = fs.get(model, task, "test")
        else:
            tr, te = entries
        if tr.fingerprint != store_fp:
            raise StoreError(
                f"store entry {tr.key} changed while probing (fingerprint {tr.fingerprint} "
                f"!= planned {store_fp}); rerun geneb probe"
            )
        problem = ProbeProblem(
            X_train=np.ascontiguousarray(tr.embeddings, dtype=np.float32),
            y_train=np.asarray(tr.labels, dtype=np.int64),
            X_test=np.ascontiguousarray(te.embeddings, dtype=np.float32),
            n_classes=n_classes,
            standardize=standardize,
            max_iter=MAX_ITER,
        )
        if probe == "mlp":  # dispatch by MLP backend (torch by default, or sklearn)
            from geneb.probe.mlp import get_mlp_probe

            solver: Any = get_mlp_probe(backend, blas_threads=blas_threads,
                                        fit_threads=fit_threads)
        elif backend == "fast" and fit_threads is not None:
            solver = get_backend(backend, fit_threads=fit_threads)
        else:
            solver = get_backend(backend)
        cells = [
            ProbeCell(regime=f.regime, k=f.k, seed=f.seed,
                      C=float("nan") if f.C is None else f.C, train_idx=f.positions)
            for f in fits
        ]
        results = solver.solve(problem, cells)
        if len(results) != len(cells):
            raise GenebError(f"backend {solver.name!r} returned {len(results)} fits for "
                             f"{len(cells)} cells")
        y_test = np.asarray(te.labels, dtype=np.int64)
        out = []
        for f, r in zip(fits, results, strict=True):
            out.append({
                "fit_id": f.fit_id,
                **compute_metrics(y_test, r.proba, n_classes),
                "n_iter": int(r.n_iter),
                "converged": bool(r.converged),
                "fit_seconds": float(r.fit_seconds),
            })
        return out


# --------------------------------------------------------------------------- driver
def _plan(
    pair: _Pair,
    *,
    shots: Sequence[str],
    seeds: Sequence[int],
    Cs: Sequence[float],
    probe: str,
    backend_name: str,
    standardize: bool,
    take_all: bool,
    done: set[tuple[Any, ...]],
    reusable: dict[tuple[Any, ...], dict[str, Any]],
    versions: tuple[str, str],
    created: str,
) -> tuple[list[dict[str, Any]], int, int]:
    """Fill ``pair.fits``/``pair.cells``; return (reused rows, n_cells, n_skipped)."""
    fit_index: dict[tuple[Any, ...], int] = {}
    reused: list[dict[str, Any]] = []
    n_cells = n_skipped = 0
    Cs_or_none: Sequence[float | None] = Cs if probe == "linear" else (None,)
    for regime in shots:
        k = protocol.regime_k(regime)
        for seed in seeds:
            sample = protocol.draw(
                regime, pair.labels, pair.rows, seed=seed, task_fingerprint=pair.task_fp,
                n_classes=pair.n_classes, take_all=take_all, task=pair.task,
            )
            present = np.unique(pair.labels[sample.positions])
            if len(present) < 2:
                raise ProbeError(
                    f"task {pair.task!r}: the {regime} regime (seed {seed}) has train rows of "
                    f"only {len(present)} class(es); a probe needs at least two"
                )
            rows_key = hashlib.sha256(sample.positions.tobytes()).hexdigest()
            for C in Cs_or_none:
                n_cells += 1
                base = {
                    "schema_version": RESULTS_SCHEMA_VERSION,
                    "model": pair.model,
                    "task": pair.task,
                    "category": pair.category,
                    "task_synthetic": pair.synthetic,
                    "regime": regime,
                    "k": k,
                    "seed": int(seed),
                    "C": None if C is None else float(C),
                    "probe": probe,
                    "backend": backend_name,
                    "standardize": bool(standardize),
                    "take_all": bool(sample.took_all),
                    "n_classes": pair.n_classes,
                    "n_train": len(sample.positions),
                    "n_test": pair.n_test,
                    "train_rows": [] if k is None else sample.file_rows.tolist(),
                    "n_params": pair.n_params,
                    "store_fingerprint": pair.store_fp,
                    "task_fingerprint": pair.task_fp,
                    "geneb_version": versions[0],
                    "sklearn_version": versions[1],
                    "created": created,
                }
                cid = cell_id(base)
                if cid in done:
                    n_skipped += 1
                    continue
                if k is None and probe == "linear":
                    old = reusable.get(_seedless(cid))
                    if old is not None:  # the same deterministic full-data fit, another seed
                        reused.append({**old, "seed": int(seed), "created": created})
                        done.add(cid)
                        continue
                fkey = (rows_key, C, seed if probe == "mlp" else None)
                if fkey not in fit_index:
                    fit_index[fkey] = len(pair.fits)
                    pair.fits.append(FitJob(len(pair.fits), regime, k, int(seed), C,
                                            sample.positions))
                pair.cells.append((base, fit_index[fkey]))
                done.add(cid)
    return reused, n_cells, n_skipped


_SEED_POS = 3  # index of "seed" in CELL_IDENTITY


def _seedless(cid: tuple[Any, ...]) -> tuple[Any, ...]:
    return cid[:_SEED_POS] + cid[_SEED_POS + 1 :]


def _default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS
        return max(1, os.cpu_count() or 1)


def run_probes(
    store: str | os.PathLike[str] | FeatureStore,
    out: str | os.PathLike[str],
    *,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    shots: str | Iterable[str | int] = ("1", "10", "full"),
    seeds: str | Iterable[int] = DEFAULT_SEEDS,
    Cs: str | Iterable[float] = (1.0,),  # noqa: N803 - C is the conventional name
    probe: str = "linear",
    backend: str = "auto",
    workers: int | None = None,
    scheduler: str | None = None,
    standardize: bool = False,
    take_all: bool = False,
    progress: bool = False,
    on_group_done: Callable[[str, str, int], None] | None = None,
) -> ProbeRunSummary:
    """Probe every requested (model, task) of ``store`` and merge the rows into ``out``.

    Rerunning computes nothing; extending seeds/Cs/models/tasks computes only the new cells.
    ``workers=1`` (or a single (model, task) with ``workers=None``) runs in this process;
    otherwise a Dask LocalCluster (processes, one thread and one BLAS thread each) or the
    cluster at ``scheduler`` runs one job per (model, task).
    """
    t0 = time.perf_counter()
    shots_t = protocol.parse_shots(shots)
    seeds_t = protocol.parse_seeds(seeds)
    Cs_t = protocol.parse_Cs(Cs)
    if probe not in PROBES:
        raise unknown_name("probe", probe, PROBES)
    if workers is not None and workers < 1:
        raise ProbeError(f"workers must be >= 1, got {workers}")
    if workers is not None and scheduler:
        raise ProbeError("give either workers (a local cluster) or scheduler (an existing one)")
    fs = store if isinstance(store, FeatureStore) else FeatureStore(store, "r")
    out_p = Path(out)
    backend_name = _resolve_backend(backend, probe)
    client = _connect(scheduler) if scheduler else None
    try:
        return _run(fs, out_p, client, models=models, tasks=tasks, shots=shots_t, seeds=seeds_t,
                    Cs=Cs_t, probe=probe, backend_name=backend_name, workers=workers,
                    standardize=standardize, take_all=take_all, progress=progress,
                    on_group_done=on_group_done, t0=t0)
    finally:
        if client is not None:
            client.close()


def _run(
    fs: FeatureStore,
    out_p: Path,
    client: Any | None,
    *,
    models: Sequence[str] | None,
    tasks: Sequence[str] | None,
    shots: tuple[str, ...],
    seeds: tuple[int, ...],
    Cs: tuple[float, ...],  # noqa: N803
    probe: str,
    backend_name: str,
    workers: int | None,
    standardize: bool,
    take_all: bool,
    progress: bool,
    on_group_done: Callable[[str, str, int], None] | None,
    t0: float,
) -> ProbeRunSummary:
    """Plan, check, solve and write (see the module docstring for the order)."""
    existing = read_table(out_p) if out_p.exists() else None
    done: set[tuple[Any, ...]] = set()
    reusable: dict[tuple[Any, ...], dict[str, Any]] = {}
    if existing is not None:
        for r in existing.to_pylist():
            cid = cell_id(r)
            done.add(cid)
            if r["regime"] == "full" and r["probe"] == "linear":
                reusable.setdefault(_seedless(cid), r)

    pairs = [_inspect_pair(fs, m, t) for m, t in _select_pairs(fs, models, tasks)]
    versions = _versions()
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    reused_rows: list[dict[str, Any]] = []
    n_cells = n_skipped = 0
    for p in pairs:
        reused, nc, ns = _plan(
            p, shots=shots, seeds=seeds, Cs=Cs, probe=probe, backend_name=backend_name,
            standardize=standardize, take_all=take_all, done=done, reusable=reusable,
            versions=versions, created=created,
        )
        reused_rows += reused
        n_cells += nc
        n_skipped += ns
    todo = [p for p in pairs if p.fits]
    n_procs = workers if workers is not None else _default_workers()
    in_process = bool(todo) and client is None and (n_procs == 1 or len(todo) == 1)
    read: dict[tuple[str, str], tuple[StoreEntry, StoreEntry]] = {}
    for p in todo:  # NaN/inf anywhere: fail before any work
        tr = _check_finite(fs, p.model, p.task, "train")
        te = _check_finite(fs, p.model, p.task, "test")
        if in_process and len(todo) == 1:  # solved right here next: do not read it again
            read[(p.model, p.task)] = (tr, te)
        del tr, te

    table: pa.Table | None = existing
    if reused_rows:
        table = merge_into(out_p, rows_to_table(reused_rows))
    n_fits = sum(len(p.fits) for p in todo)
    n_computed = 0
    todo.sort(key=lambda p: -len(p.labels) * p.dim)  # largest first: better load balance

    def finish(pair: _Pair, fit_results: list[dict[str, Any]]) -> None:
        nonlocal table, n_computed
        by_id = {r["fit_id"]: r for r in fit_results}
        rows = []
        for base, fid in pair.cells:
            r = by_id[fid]
            rows.append({**base, **{k: v for k, v in r.items() if k != "fit_id"}})
        # merged into the table as it is on disk now, under a lock: another run writing the
        # same table meanwhile keeps its rows
        table = merge_into(out_p, rows_to_table(rows))
        n_computed += len(rows)
        if on_group_done is not None:
            on_group_done(pair.model, pair.task, len(rows))

    args = dict(probe=probe, backend=backend_name, standardize=standardize)
    bar = _progress_bar(n_fits, progress)
    try:
        if not todo:
            pass
        elif in_process:
            for p in todo:
                # this process is the whole run: full-data fits may use every core given
                res = solve_group(fs.path, p.model, p.task, p.store_fp, p.n_classes, p.fits,
                                  **args, fit_threads=min(n_procs, _default_workers()),
                                  entries=read.pop((p.model, p.task), None))
                finish(p, res)
                bar.update(len(p.fits))
        else:
            _run_dask(todo, fs.path, args, client, min(n_procs, len(todo)), finish, bar)
    finally:
        bar.close()
    if table is None:  # nothing existed and nothing new: still leave a valid (empty) table
        merge_into(out_p, rows_to_table([]))
    return ProbeRunSummary(
        out=out_p, backend=backend_name, n_cells=n_cells, n_skipped=n_skipped,
        n_reused=len(reused_rows), n_computed=n_computed, n_fits=n_fits, n_groups=len(todo),
        seconds=time.perf_counter() - t0,
    )


#: How long to wait for an existing scheduler to answer (checked before any work).
SCHEDULER_TIMEOUT = "15s"


def _connect(scheduler: str) -> Any:
    from distributed import Client

    try:
        return Client(scheduler, timeout=SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as e:
        raise GenebError(f"cannot reach the Dask scheduler at {scheduler!r}: {e}") from e


def _run_dask(
    todo: list[_Pair],
    store_path: str,
    args: dict[str, Any],
    client: Any | None,
    n_workers: int,
    finish: Callable[[_Pair, list[dict[str, Any]]], None],
    bar: Any,
) -> None:
    """One Dask task per (model, task); results handled on the driver as they complete.

    ``client`` is an existing cluster's client; without one a LocalCluster of ``n_workers``
    processes (one thread each; the nanny pins OMP/OpenBLAS/MKL to one thread) is started.
    """
    from distributed import Client, LocalCluster, as_completed

    store_path = os.path.abspath(store_path) if "://" not in store_path else store_path
    cluster = None
    if client is None:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
    run = uuid.uuid4().hex[:8]
    try:
        futures = {}
        for i, p in enumerate(todo):
            fut = client.submit(solve_group, store_path, p.model, p.task, p.store_fp,
                                p.n_classes, p.fits, **args, key=f"geneb-probe-{run}-{i}",
                                pure=False)
            futures[fut] = p
        try:
            for fut in as_completed(list(futures)):
                p = futures[fut]
                finish(p, fut.result())
                bar.update(len(p.fits))
        except BaseException:
            client.cancel(list(futures))
            raise
    finally:
        if cluster is not None:
            client.close()
            cluster.close()


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, enabled: bool) -> Any:
    if not enabled or total == 0:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="fit", desc="probing", dynamic_ncols=True)
