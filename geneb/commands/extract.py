"""`geneb extract` (placeholder until built)."""

import typer


def extract() -> None:
    """Not built yet."""
    raise typer.Exit("geneb extract: not built yet")
