"""A process-wide I/O thread pool and a work-sharing ``parallel`` map for shard files.

Why: crc32c and the read/write system calls release the GIL, so shard files are read and
written by the calling thread plus a few pool threads; starting threads per call costs
milliseconds on a loaded machine, so the pool lives as long as the process (per pid).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

_Item = TypeVar("_Item")

_pool: tuple[int, ThreadPoolExecutor] | None = None


def pool() -> ThreadPoolExecutor:
    """A process-wide I/O thread pool (recreated after fork; starting threads per call costs
    milliseconds on a loaded machine)."""
    global _pool
    if _pool is None or _pool[0] != os.getpid():
        _pool = (os.getpid(), ThreadPoolExecutor(max(1, min(4, os.cpu_count() or 1)), "geneb-io"))
    return _pool[1]


def parallel(fn: Callable[[_Item], object], items: Iterable[_Item]) -> None:
    """Run ``fn`` over ``items`` with the calling thread plus idle pool threads pulling from
    one queue (no hand-off wait for the first item; uneven items balance themselves). The
    first exception is re-raised after every started call has returned."""
    import threading

    todo = list(items)
    nested = threading.current_thread().name.startswith("geneb-io")  # never wait on own pool
    helpers = min(len(todo), os.cpu_count() or 1, 4) - 1
    if helpers < 1 or nested:
        for it in todo:
            fn(it)
        return
    queue = iter(todo)
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work() -> None:
        while True:
            with lock:
                if errors:
                    return
                try:
                    item = next(queue)
                except StopIteration:
                    return
            try:
                fn(item)
            except BaseException as e:  # noqa: BLE001 - re-raised in the caller
                with lock:
                    errors.append(e)
                return

    futures = [pool().submit(work) for _ in range(helpers)]
    work()
    for f in futures:
        f.result()
    if errors:
        raise errors[0]


