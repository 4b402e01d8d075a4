"""Dask clusters in one place for extraction and probing alike: connecting to a running one,
and the options every local cluster geneb starts is built with."""

from __future__ import annotations

import logging
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
