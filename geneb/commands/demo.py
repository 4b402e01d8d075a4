"""`geneb demo` (placeholder until built)."""

import typer


def demo() -> None:
    """Not built yet."""
    raise typer.Exit("geneb demo: not built yet")
