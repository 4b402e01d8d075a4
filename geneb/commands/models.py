"""`geneb models` commands (placeholder until built)."""

import typer

app = typer.Typer(no_args_is_help=True)


@app.command("list")
def list_() -> None:
    """Not built yet."""
    raise typer.Exit("geneb models: not built yet")
