"""Progress bars, in ONE place: tqdm on stderr, ticking, for every long command.

Whether to show one is the caller's choice (``progress=True`` comes from the CLI's
``show_progress()``: an interactive terminal, never CI); this module only draws it. Two things
a bare ``tqdm(dynamic_ncols=True)`` gets wrong: on a terminal that reports no size (a
pseudo-terminal, some IDE consoles) it draws a zero-width bar, i.e. nothing; and a step that
takes minutes without an update (one MLP pair of 135 fits, one model's extraction on a worker)
shows a frozen bar. Here a terminal without a size gets 80 x 24, and the bar is redrawn
every :data:`TICK_S` seconds so its elapsed time moves while a step runs.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Protocol

#: seconds between redraws of a bar while nothing is counted
TICK_S = 1.0
#: columns of a bar on a terminal that reports no size
FALLBACK_COLUMNS = 80
FALLBACK_ROWS = 24


class ProgressBar(Protocol):
    """What callers do with a bar: count, say what is running, close it."""

    def update(self, n: int = 1) -> None: ...

    def set_postfix_str(self, text: str) -> None: ...

    def close(self) -> None: ...


class NoBar:
    """What a caller gets when no bar is shown: every call does nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


class _Ticking:
    """A tqdm bar redrawn by a daemon thread every ``TICK_S`` seconds until closed."""

    def __init__(self, bar: Any) -> None:  # a tqdm bar (tqdm has no type annotations)
        self.bar = bar
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True, name="geneb-progress")
        self._thread.start()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_S):
            self.bar.refresh()

    def update(self, n: int = 1) -> None:
        self.bar.update(n)

    def set_postfix_str(self, text: str) -> None:
        self.bar.set_postfix_str(text)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2 * TICK_S)
        self.bar.close()


def _columns() -> int:
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (OSError, ValueError, AttributeError):
        return 0


def progress_bar(total: int, enabled: bool, *, desc: str, unit: str, initial: int = 0
                 ) -> ProgressBar:
    """A ticking bar on stderr counting ``total`` ``unit``s (``NoBar`` when not ``enabled``
    or there is nothing to count). Methods: ``update(n)``, ``set_postfix_str``, ``close``."""
    if not enabled or total == 0:
        return NoBar()
    from tqdm import tqdm

    sized = _columns() > 0
    # a terminal of no size: tqdm would draw 0 columns and hide the bar as below its 0 rows
    bar = tqdm(total=total, initial=initial, unit=unit, desc=desc, file=sys.stderr,
               dynamic_ncols=sized, ncols=None if sized else FALLBACK_COLUMNS,
               nrows=None if sized else FALLBACK_ROWS)  # fmt: skip
    return _Ticking(bar)
