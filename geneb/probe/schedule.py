"""Scheduling a probe run's pairs (model, task): in this process, on a local Dask cluster, or
on an existing one, with each pair's results handed to the driver (which writes them) as the
pairs complete."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from geneb._progress import ProgressBar
from geneb.cluster import as_completed, dask_client
from geneb.probe.plan import Pair
from geneb.probe.worker import solve_pair

if TYPE_CHECKING:
    from distributed import Client


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS
        return max(1, os.cpu_count() or 1)


def run_dask(
    todo: list[Pair],
    store_path: str,
    args: dict[str, Any],
    client: Client | None,
    n_workers: int,
    finish: Callable[[Pair, list[dict[str, Any]]], None],
    bar: ProgressBar,
    gpu: bool = False,
) -> None:
    """One Dask task per pair (model, task); results handled on the driver as they complete.

    ``client`` is an existing cluster's client; without one a local cluster of ``n_workers``
    is started: with ``gpu`` (the solver computes on a GPU) dask-cuda workers, one per GPU,
    each solving on its own device; else processes (one thread each; the nanny pins
    OMP/OpenBLAS/MKL to one thread), never several CUDA contexts on one GPU.
    """
    store_path = os.path.abspath(store_path) if "://" not in store_path else store_path
    run = uuid.uuid4().hex[:8]
    with dask_client(client=client, workers=n_workers, device="cuda" if gpu else None) as client:
        futures = {}
        for i, p in enumerate(todo):
            fut = client.submit(solve_pair, store_path, p.model, p.task, p.store_fp,
                                p.n_classes, p.fits, **args, storage_dtype=p.storage_dtype,
                                key=f"geneb-probe-{run}-{i}", pure=False)
            futures[fut] = p
        try:
            for fut in as_completed(list(futures)):
                p = futures[fut]
                finish(p, fut.result())
                bar.update(len(p.fits))
        except BaseException:
            client.cancel(list(futures))  # type: ignore[no-untyped-call]  # unannotated
            raise
