"""`geneb run` (placeholder until built)."""

import typer


def run() -> None:
    """Not built yet."""
    raise typer.Exit("geneb run: not built yet")
