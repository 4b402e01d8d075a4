"""`geneb report` (placeholder until built)."""

import typer


def report() -> None:
    """Not built yet."""
    raise typer.Exit("geneb report: not built yet")
