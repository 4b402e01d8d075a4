"""Shared CLI plumbing: clean errors (no traceback), consoles, quiet-in-CI progress."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import typer

from geneb.errors import GenebError

if TYPE_CHECKING:
    from rich.console import Console

P = ParamSpec("P")
R = TypeVar("R")



class _LazyConsole:
    """A rich ``Console`` made on first use: importing rich costs ~20 ms, and commands that
    print plain lines (``geneb probe``) should not pay it at start-up."""

    def __init__(self, **kwargs: Any) -> None:
        self._kwargs = kwargs
        self._console: Console | None = None

    def __getattr__(self, name: str) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._kwargs)
        return getattr(self._console, name)


console: Any = _LazyConsole()
err_console: Any = _LazyConsole(stderr=True)


def cli_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Turn a ``GenebError`` into ``error: <message>`` on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except GenebError as e:
            err_console.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def show_progress() -> bool:
    """Progress bars only on an interactive terminal and never in CI."""
    if os.environ.get("CI") or os.environ.get("GENEB_NO_PROGRESS"):
        return False
    return sys.stderr.isatty()
