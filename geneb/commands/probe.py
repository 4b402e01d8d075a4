"""`geneb probe` (placeholder until built)."""

import typer


def probe() -> None:
    """Not built yet."""
    raise typer.Exit("geneb probe: not built yet")
