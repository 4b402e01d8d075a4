"""Dask clusters in one place for extraction and probing alike: starting a local one (CPU
processes, or GPU workers through dask-cuda), connecting to a running one, and closing what
geneb opened (:func:`dask_client`), with the options every local cluster is built with.

GPU workers (dask-cuda, read in rapidsai/dask-cuda @ 63a1ea9712fe54facb5e045dd19dc8ffeb6c1086,
``dask_cuda/local_cuda_cluster.py`` ``new_worker_spec`` and ``dask_cuda/utils.py``
``cuda_visible_devices``): ``LocalCUDACluster(CUDA_VISIBLE_DEVICES=[...], n_workers=n)``
starts one worker per listed device, and worker i gets ``CUDA_VISIBLE_DEVICES`` rotated so
that its own GPU comes first ("3,4,5,6,7,0,1,2"): inside a worker ``cuda`` is its GPU and
``cuda:N`` another worker's. So geneb chooses the devices when it starts the cluster (a
user's ``cuda:N`` is the N-th GPU this process sees) and sends its workers ``cuda``
(:func:`job_device`); asking for more workers than GPUs is an error, not a hang or a raise
deep in dask-cuda. ``device="auto"`` starts GPU workers whenever a GPU is visible.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from geneb.errors import GenebError

if TYPE_CHECKING:
    from distributed import Client, Future

_T = TypeVar("_T")


class Cluster(Protocol):
    """What geneb does with a cluster it started (``LocalCluster``, ``LocalCUDACluster``)."""

    def close(self) -> object: ...

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


def connect(scheduler: str, timeout: str | None = None) -> Client:
    """A client of the running cluster at ``scheduler``; a clear error when unreachable."""
    from distributed import Client

    try:  # distributed's Client.__init__ is unannotated
        return Client(scheduler, timeout=timeout or SCHEDULER_TIMEOUT)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as e:
        raise GenebError(f"cannot reach the Dask scheduler at {scheduler!r}: {e}") from e


#: ids of the clients of GPU clusters geneb started (their workers get ``cuda``).
_GPU_CLIENTS: set[int] = set()


def gpu_count() -> int:
    """CUDA devices this process sees (0 without a CUDA build of torch or a GPU)."""
    try:
        import torch

        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except Exception:  # a broken CUDA install counts as none
        return 0


def gpu_workers(device: str | None) -> bool:
    """Whether a local cluster for ``device`` is one of GPU workers: ``cuda`` / ``cuda:N``,
    or ``auto`` on a machine with a visible GPU."""
    d = str(device or "").lower()
    return d.startswith("cuda") or (d == "auto" and gpu_count() > 0)


def _visible() -> list[int | str]:
    """The GPUs this process sees, as CUDA_VISIBLE_DEVICES names them (ids or UUIDs)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is None:
        return list(range(gpu_count()))
    names = [v.strip() for v in env.split(",") if v.strip()]
    return [int(v) if v.isdigit() else v for v in names][: gpu_count()]


def cuda_devices(device: str | None, workers: int | None) -> list[int | str]:
    """The GPUs (physical names) local GPU workers run on, one worker each: the one
    ``cuda:N`` names (the N-th this process sees), else the first ``workers`` (default all)."""
    visible = _visible()
    d = str(device or "auto").lower()
    if ":" in d:
        n = int(d.split(":", 1)[1])
        if n >= len(visible) or (workers or 1) != 1:
            raise GenebError(
                f"device: {device} with workers: {workers} needs GPU {n} and one worker, but "
                f"this machine shows {len(visible)} GPU(s); use device 'cuda' for one worker "
                "per GPU", param="device")
        return [visible[n]]
    n = len(visible) if workers is None else int(workers)
    if n > len(visible) or n < 1:
        raise GenebError(f"workers: {workers} GPU workers asked for, but this machine shows "
                         f"{len(visible)} GPU(s) (one worker per GPU)", param="workers")
    return visible[:n]


def worker_device(device: str | None) -> str | None:
    """The device a job asks for inside a geneb-started GPU worker: its own GPU, ``cuda``
    (``cuda:N`` was applied when the worker was placed)."""
    return "cuda" if str(device or "").lower().startswith("cuda") else device


def job_device(device: str | None, client: Client) -> str | None:
    """``device`` as jobs on ``client``'s workers must name it (:func:`worker_device` on a
    GPU cluster geneb started; unchanged on a user's cluster)."""
    return worker_device(device) if id(client) in _GPU_CLIENTS else device


def _client(cluster: Cluster) -> Client:
    from distributed import Client

    return Client(cluster)  # type: ignore[no-untyped-call]  # Client.__init__ is unannotated


def as_completed(futures: Iterable[Future[_T]]) -> Iterator[Future[_T]]:
    """``distributed.as_completed``, typed here (the class is unannotated).

    Parameters
    ----------
    futures : iterable of distributed.Future
        The futures to wait for.

    Returns
    -------
    iterator of distributed.Future
        The same futures, in the order they finish.
    """
    from distributed import as_completed as completed

    done: Iterator[Future[_T]] = completed(futures)  # type: ignore[no-untyped-call]
    return done


def start_local(workers: int | None, device: str | None = None) -> tuple[Cluster, Client]:
    """(cluster, client) of local workers: GPU workers via dask-cuda, one per GPU, when
    :func:`gpu_workers` (``workers``: how many, default one per GPU), else ``workers``
    (default 1) CPU processes with one thread each (the nanny pins OMP, OpenBLAS and MKL to
    one thread, so workers never oversubscribe the cores)."""
    if gpu_workers(device):
        devices = cuda_devices(device, workers)
        try:
            from dask_cuda import LocalCUDACluster
        except ImportError as e:
            raise GenebError(
                f"device: {device!r} with workers needs dask-cuda (pip install "
                f"'geneb[gpu]' or dask-cuda): {e}", param="device"
            ) from e
        cluster = LocalCUDACluster(CUDA_VISIBLE_DEVICES=devices, n_workers=len(devices),
                                   **local_cluster_options())
        client = _client(cluster)
        _GPU_CLIENTS.add(id(client))
        return cluster, client
    from distributed import LocalCluster

    cluster = LocalCluster(  # type: ignore[no-untyped-call]  # its __init__ is unannotated
        n_workers=int(workers or 1), processes=True, **local_cluster_options())
    return cluster, _client(cluster)


@contextlib.contextmanager
def dask_client(
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    client: Client | None = None,
    device: str | None = None,
) -> Iterator[Client]:
    """The Dask client a piece of work runs on, for the length of a ``with`` block.

    ``client``: the caller's, used and left open (several calls can share one cluster);
    ``scheduler``: a client of that running cluster, closed at the end (the cluster keeps
    running); otherwise a local cluster (:func:`start_local`: GPU workers for ``device``
    ``cuda*`` or ``auto`` on a GPU machine), closed with its client at the end, also when
    the block fails."""
    if client is not None:
        yield client
        return
    cluster: Cluster | None = None
    if scheduler:
        client = connect(scheduler)
    else:
        cluster, client = start_local(workers, device)
    try:
        yield client
    finally:
        _GPU_CLIENTS.discard(id(client))
        client.close()  # type: ignore[no-untyped-call]  # distributed: unannotated
        if cluster is not None:
            cluster.close()
