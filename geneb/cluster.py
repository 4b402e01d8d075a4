"""Connecting to a running Dask cluster: one place for extraction and probing alike."""

from __future__ import annotations

from typing import Any

from geneb.errors import GenebError

#: How long to wait for a scheduler before saying it cannot be reached.
SCHEDULER_TIMEOUT = "15s"


def connect(scheduler: str, timeout: str | None = None) -> Any:
    """A client of the running cluster at ``scheduler``; a clear error when unreachable."""
    from distributed import Client

    try:
        return Client(scheduler, timeout=timeout or SCHEDULER_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as e:
        raise GenebError(f"cannot reach the Dask scheduler at {scheduler!r}: {e}") from e
