"""Dask clusters in one place for extraction and probing alike: starting a local one (CPU
processes, or GPU workers through dask-cuda), connecting to a running one, and closing what
geneb opened (:func:`dask_client`), with the options every local cluster is built with."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

from geneb.errors import GenebError

#: How long to wait for a scheduler before saying it cannot be reached.
SCHEDULER_TIMEOUT = "15s"


def local_cluster_options() -> dict[str, Any]:
    """Keyword arguments for ``LocalCluster`` (and dask-cuda's ``LocalCUDACluster``).

    Why ``scheduler_kwargs``: ``dashboard_address=None`` turns the dashboard off, but the
    scheduler still binds its HTTP server (health and metrics routes) to its default port
    8787; a second cluster on the machine (a user's notebook, the extraction cluster of the
    same ``geneb run``, another test) then makes Dask warn "Port 8787 is already in use"
    for a port the user never asked for and cannot act on. Port 0 lets the OS pick a free
    one: no dashboard, no warning. Worker logs below ERROR are silenced for the same reason.
    """
    return {
        "threads_per_worker": 1,
        "dashboard_address": None,
        "scheduler_kwargs": {"dashboard_address": ":0"},
        "silence_logs": logging.ERROR,
    }


def connect(scheduler: str, timeout: str | None = None) -> Any:
    """A client of the running cluster at ``scheduler``; a clear error when unreachable."""
    from distributed import Client

    try:
        return Client(scheduler, timeout=timeout or SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as e:
        raise GenebError(f"cannot reach the Dask scheduler at {scheduler!r}: {e}") from e


def _is_cuda(device: str | None) -> bool:
    return bool(device) and str(device).lower().startswith("cuda")


def start_local(workers: int, device: str | None = None) -> tuple[Any, Any]:
    """(cluster, client) of ``workers`` local workers: GPU workers via dask-cuda when
    ``device`` is CUDA, else CPU processes with one thread each (the nanny pins OMP,
    OpenBLAS and MKL to one thread, so workers never oversubscribe the cores)."""
    from distributed import Client, LocalCluster

    if _is_cuda(device):
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError as e:
            raise GenebError(
                f"device: {device!r} with workers needs dask-cuda (pip install "
                f"'geneb[gpu]' or dask-cuda): {e}", param="device"
            ) from e
        cluster = LocalCUDACluster(n_workers=workers, **local_cluster_options())
    else:
        cluster = LocalCluster(n_workers=workers, processes=True, **local_cluster_options())
    return cluster, Client(cluster)


@contextlib.contextmanager
def dask_client(
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    client: Any | None = None,
    device: str | None = None,
) -> Iterator[Any]:
    """The Dask client a piece of work runs on, for the length of a ``with`` block.

    ``client``: the caller's, used and left open (several calls can share one cluster);
    ``scheduler``: a client of that running cluster, closed at the end (the cluster keeps
    running); otherwise a local cluster of ``workers`` (default 1), closed with its client
    at the end, also when the block fails."""
    if client is not None:
        yield client
        return
    cluster = None
    if scheduler:
        client = connect(scheduler)
    else:
        cluster, client = start_local(int(workers or 1), device)
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
