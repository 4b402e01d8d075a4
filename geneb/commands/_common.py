"""Shared CLI plumbing: clean errors (no traceback), consoles, quiet-in-CI progress."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer
from rich.console import Console

from geneb.errors import GenebError

P = ParamSpec("P")
R = TypeVar("R")

console = Console()
err_console = Console(stderr=True)


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
