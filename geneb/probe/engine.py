"""The probe engine: plan the GENEB grid from the store, solve it (in-process or on Dask), and
add each finished (model, task) to the results table.

How work flows (one module per step):

1. ``geneb.probe.plan``: read only attributes, labels and row indices; draw every cell's train
   rows; drop cells already in the table; check everything that can fail.
2. ``geneb.probe.worker``: one call per pair (model, task) reads its embeddings and solves its fits.
3. ``geneb.probe.schedule``: runs the pairs here, on a local Dask cluster or on a given one.
4. ``geneb.probe.write``: each finished pair is appended as one part of the results folder
   (``geneb.results.parts``): constant cost per pair, and a killed run keeps every finished pair.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from geneb._progress import progress_bar
from geneb.cluster import dask_client, gpu_count
from geneb.constraints import (
    BACKEND,
    BOOL,
    C_VALUE,
    PROBE,
    PROTOCOL,
    RIDGE_ALPHA,
    SCHEDULER,
    SEED,
    SHOT,
    WORKERS,
    ListOf,
    validate_params,
    validated_list,
)
from geneb.errors import ProbeError
from geneb.probe.plan import (
    Done,
    check_values,
    inspect_pair,
    plan_pair,
    select_pairs,
    versions,
)
from geneb.probe.ridge_probe import plan_ridge_pair
from geneb.probe.schedule import default_workers, run_dask
from geneb.probe.solvers import PROBES, resolve_backend, runs_on_gpu
from geneb.probe.worker import solve_pair
from geneb.probe.write import ResultWriter
from geneb.protocol import DEFAULT_ALPHA_SWEEP, DEFAULT_C, DEFAULT_PROTOCOL, DEFAULT_SEEDS, REGIMES
from geneb.results.schema import RESULTS_SCHEMA
from geneb.results.table import ResultsTable
from geneb.store import FeatureStore, StoreEntry
from geneb.vocabulary import REGRESSION

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["PROBES", "ProbeRunSummary", "run_probes", "solve_pair"]


@dataclass(frozen=True)
class ProbeRunSummary:
    """What one ``run_probes`` call did."""

    results: Path  # the results table written
    backend: str  # resolved backend name ("sklearn" for the MLP probe and the paper protocol)
    n_cells: int  # cells the request spans
    n_skipped: int  # already in the results table: not recomputed
    n_reused: int  # full-data cells copied from the same fit of another seed in the table
    n_computed: int  # new rows written from fits solved in this run
    n_fits: int  # distinct fits solved (identical cells share one fit)
    n_pairs: int  # pairs (model, task) solved
    seconds: float
    protocol: str = DEFAULT_PROTOCOL
    #: wall seconds by component: "read" (results table + embeddings read for the finite
    #: check), "plan", "solve" (in-process: the fits; Dask: pairs incl. their reads, overlapped
    #: with writing), "write" (appending parts)
    timings: dict[str, float] = field(default_factory=dict)
    #: in-process runs: (model, task, seconds solving it) per pair, in solve order
    pair_solve_seconds: tuple[tuple[str, str, float], ...] = ()
    #: (model, task, rows) of the rows written whose fit stopped at its iteration limit
    not_converged: tuple[tuple[str, str, int], ...] = ()

    @property
    def n_not_converged(self) -> int:
        """Rows written in this run whose fit did not converge."""
        return sum(n for _, _, n in self.not_converged)

    def convergence_note(self, shown: int = 4) -> str:
        """One line naming the non-converged cells and where to look.

        Parameters
        ----------
        shown : int
            Name at most this many pairs, worst first (default 4).

        Returns
        -------
        str
            The line; ``""`` when every fit converged.
        """
        if not self.not_converged:
            return ""
        worst = sorted(self.not_converged, key=lambda x: (-x[2], x[0], x[1]))
        where = ", ".join(f"{m}/{t} ({n})" for m, t, n in worst[:shown])
        more = f" and {len(worst) - shown} more pairs" if len(worst) > shown else ""
        return (f"{self.n_not_converged} of {self.n_computed + self.n_reused} cells did not "
                f"converge (the solver stopped at its iteration limit; the scores are the last "
                f"iterate's, kept with converged = false and n_iter in {self.results}): {where}"
                f"{more}. Common for MLP fits on few rows; geneb report lists them under "
                "'Cells that did not converge'")


#: ``run_probes``' parameters, declared once: checked before any work (``validate_params``),
#: and the constraints of a plan's ``[probe]`` section and of ``geneb probe``'s options.
#: List parameters also take a comma string (``shots="1,10,full"``); values are deduplicated.
PROBE_PARAMS = {
    "shots": ListOf(SHOT, unique=True),
    "seeds": ListOf(SEED, unique=True),
    "Cs": ListOf(C_VALUE, unique=True),
    "alphas": ListOf(RIDGE_ALPHA, unique=True),
    "probe": PROBE,
    "backend": BACKEND,
    "protocol": PROTOCOL,
    "workers": WORKERS,
    "scheduler": SCHEDULER,
    "standardize": BOOL,
    "take_all": BOOL,
}


@validate_params(PROBE_PARAMS)
def run_probes(
    store: str | os.PathLike[str] | FeatureStore,
    results: str | os.PathLike[str],
    *,
    models: Sequence[str] | None = None,
    tasks: Sequence[str] | None = None,
    shots: str | Iterable[str | int] = REGIMES,
    seeds: str | Iterable[int] = DEFAULT_SEEDS,
    Cs: str | Iterable[float] = DEFAULT_C,  # noqa: N803 - C is the conventional name
    alphas: str | Iterable[float] = DEFAULT_ALPHA_SWEEP,
    probe: str = "linear",
    backend: str = "auto",
    protocol: str = DEFAULT_PROTOCOL,
    workers: int | None = None,
    scheduler: str | None = None,
    standardize: bool = False,
    take_all: bool = False,
    progress: bool = False,
    on_pair_done: Callable[[str, str, int], None] | None = None,
) -> ProbeRunSummary:
    """Probe every requested (model, task) of ``store`` and add the rows to the table ``results``.

    Rerunning computes nothing; extending seeds/Cs/models/tasks computes only the new cells.
    ``workers=1`` (or one pair with ``workers=None``) runs in this process, else a Dask
    LocalCluster (one thread, one BLAS thread per worker; at most one worker per GPU for a GPU
    solver) or the cluster at ``scheduler``, one call per pair. Every argument of
    :data:`PROBE_PARAMS` is checked first (``ParamError`` naming it).

    Parameters
    ----------
    store : str, os.PathLike or FeatureStore
        The feature store holding the embeddings.
    results : str or os.PathLike
        The results table (a folder) the rows are added to.
    models, tasks : sequence of str, optional
        Which models and tasks of the store; all when None.
    shots, seeds, Cs, alphas : str or iterable
        Regimes (k-shot counts and/or ``"full"``), seeds, inverse L2 penalties of the
        logistic probe, ridge penalties of regression tasks (comma strings accepted).
    probe : str
        ``"linear"`` or ``"mlp"``.
    backend : str
        The solver backend; ``"auto"`` chooses by the data and hardware.
    protocol : str
        ``"converged"`` (fits solved to tolerance) or ``"paper"`` (GENEB's scikit-learn probe
        and its k-shot draws).
    workers : int, optional
        Dask workers; None chooses (see above).
    scheduler : str, optional
        Address of a running Dask scheduler.
    standardize : bool
        Standardise features on the training rows before fitting.
    take_all : bool
        When a class has fewer than k training rows, take all of them (recorded in the
        row) instead of refusing the k-shot sample.
    progress : bool
        Show a progress bar (on a TTY).
    on_pair_done : callable, optional
        Called as ``on_pair_done(model, task, n_rows)`` after each pair's rows are written.

    Returns
    -------
    ProbeRunSummary
        Counts of pairs and cells computed and reused, and the cells that did not converge.
    """
    t0 = time.perf_counter()
    backend_name = resolve_backend(backend, probe, protocol)  # which combinations exist
    if workers is not None and scheduler:
        raise ProbeError("give either workers (a local cluster) or scheduler (an existing one)")
    fs = store if isinstance(store, FeatureStore) else FeatureStore(store, "r")
    # a scheduler: its client for the whole run; else a local cluster only if _run needs one
    with dask_client(scheduler=scheduler) if scheduler else contextlib.nullcontext() as client:
        return _run(fs, Path(results), client, models=models, tasks=tasks,
                    shots=validated_list(shots, str), seeds=validated_list(seeds, int),
                    Cs=validated_list(Cs, float), alphas=validated_list(alphas, float),
                    probe=probe,
                    backend_name=backend_name,
                    protocol_name=protocol, workers=workers, standardize=standardize,
                    take_all=take_all, progress=progress, on_pair_done=on_pair_done, t0=t0)


def _run(
    fs: FeatureStore,
    out_p: Path,
    client: Client | None,
    *,
    models: Sequence[str] | None,
    tasks: Sequence[str] | None,
    shots: tuple[str, ...],
    seeds: tuple[int, ...],
    Cs: tuple[float, ...],  # noqa: N803
    alphas: tuple[float, ...],
    probe: str,
    backend_name: str,
    protocol_name: str,
    workers: int | None,
    standardize: bool,
    take_all: bool,
    progress: bool,
    on_pair_done: Callable[[str, str, int], None] | None,
    t0: float,
) -> ProbeRunSummary:
    """Plan, check, solve and write (see the module docstring for the order)."""
    tm = {"read": 0.0, "plan": 0.0, "solve": 0.0, "write": 0.0}
    t = time.perf_counter()
    table = ResultsTable(out_p)
    table.check_writable()  # a published source (published:geneb) is refused before any work
    exists = table.exists()
    done = Done.of(table.read() if exists else None)
    tm["read"] += time.perf_counter() - t

    t = time.perf_counter()
    pairs = [inspect_pair(fs, m, t_) for m, t_ in select_pairs(fs, models, tasks)]
    vers = versions()
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    reused_rows, n_cells, n_skipped = _plan_pairs(
        pairs, dict(shots=shots, seeds=seeds, probe=probe, standardize=standardize, done=done,
                    versions=vers, created=created),
        dict(Cs=Cs, backend_name=backend_name, protocol_name=protocol_name, take_all=take_all),
        alphas)
    todo = [p for p in pairs if p.fits]
    tm["plan"] += time.perf_counter() - t

    t = time.perf_counter()
    # a GPU solver: at most one worker per GPU (never one CUDA context per core on GPU 0)
    gpu = runs_on_gpu(probe, protocol_name, backend_name)
    n_procs = workers if workers is not None else gpu_count() if gpu else default_workers()
    in_process = bool(todo) and client is None and (n_procs == 1 or len(todo) == 1)
    read = _check_entries(fs, todo, keep=in_process and len(todo) == 1)
    tm["read"] += time.perf_counter() - t

    writer = ResultWriter(out_p, on_pair_done)
    writer.rows(reused_rows)
    n_fits = sum(len(p.fits) for p in todo)
    todo.sort(key=lambda p: -len(p.labels) * p.dim)  # largest first: better load balance

    args = dict(probe=probe, backend=backend_name, standardize=standardize,
                protocol_name=protocol_name)
    bar = progress_bar(n_fits, progress, desc=f"probing ({probe})", unit="fit")
    pair_s: list[tuple[str, str, float]] = []
    t = time.perf_counter()
    try:
        if todo and in_process:
            pair_s = _solve_in_process(fs, todo, args, n_procs, read, writer, bar)
            tm["solve"] += sum(s for _, _, s in pair_s)
        elif todo:
            n_workers = min(n_procs, len(todo), *([gpu_count()] if gpu else []))
            run_dask(todo, fs.path, args, client, n_workers, writer.pair, bar, gpu=gpu)
            tm["solve"] += time.perf_counter() - t - writer.seconds
    finally:
        bar.close()
    if not exists and writer.n_parts == 0:  # nothing existed and nothing new: a valid table
        table.append(RESULTS_SCHEMA.empty_table())
    tm["write"] = writer.seconds
    return ProbeRunSummary(
        results=out_p, backend=backend_name, n_cells=n_cells, n_skipped=n_skipped,
        n_reused=len(reused_rows), n_computed=writer.n_rows - len(reused_rows), n_fits=n_fits,
        n_pairs=len(todo), seconds=time.perf_counter() - t0, protocol=protocol_name,
        timings=tm, pair_solve_seconds=tuple(pair_s),
        not_converged=tuple((m, t, n) for (m, t), n in writer.not_converged.items()),
    )


def _plan_pairs(
    pairs: Sequence[Any], common: dict[str, Any], linear: dict[str, Any],
    alphas: tuple[float, ...],
) -> tuple[list[dict[str, Any]], int, int]:
    """Plan every pair's fits (ridge for regression tasks, full regime only; else the linear or
    MLP grid): (rows reused from earlier runs, cells asked for, cells already present)."""
    reused_rows: list[dict[str, Any]] = []
    n_cells = n_skipped = 0
    for p in pairs:
        if p.kind == REGRESSION:  # ridge probes, full regime only (geneb.probe.ridge_probe)
            reused, nc, ns = plan_ridge_pair(p, alphas=alphas, **common)
        else:
            reused, nc, ns = plan_pair(p, **common, **linear)
        reused_rows += reused
        n_cells += nc
        n_skipped += ns
    return reused_rows, n_cells, n_skipped


def _solve_in_process(
    fs: FeatureStore, todo: Sequence[Any], args: dict[str, Any], n_procs: int,
    read: dict[tuple[str, str], tuple[StoreEntry, StoreEntry]], writer: ResultWriter, bar: Any,
) -> list[tuple[str, str, float]]:
    """Solve every pair here (this process is the whole run: full-data fits may use every
    core given); returns (model, task, seconds) per pair."""
    pair_s: list[tuple[str, str, float]] = []
    for p in todo:
        ts = time.perf_counter()
        bar.set_postfix_str(f"{p.model} / {p.task}")
        res = solve_pair(fs.path, p.model, p.task, p.store_fp, p.n_classes, p.fits,
                          **args, storage_dtype=p.storage_dtype,
                          fit_threads=min(n_procs, default_workers()),
                          entries=read.pop((p.model, p.task), None))
        pair_s.append((p.model, p.task, time.perf_counter() - ts))
        writer.pair(p, res)
        bar.update(len(p.fits))
    return pair_s


def _check_entries(
    fs: FeatureStore, todo: Sequence[Any], *, keep: bool
) -> dict[tuple[str, str], tuple[StoreEntry, StoreEntry]]:
    """NaN/inf anywhere fails before any work; with ``keep`` (the one pair solved right here
    next) the entries read are returned so they are not read again."""
    read: dict[tuple[str, str], tuple[StoreEntry, StoreEntry]] = {}
    for p in todo:
        tr = check_values(fs, p.model, p.task, "train")
        te = check_values(fs, p.model, p.task, "test")
        if keep:
            read[(p.model, p.task)] = (tr, te)
        del tr, te
    return read
