"""`geneb models list`: which model adapters ``--model`` accepts here."""

from __future__ import annotations

import typer

from geneb.commands._common import cli_errors, console

app = typer.Typer(no_args_is_help=True, help="List model adapters.")


@app.command("list")
@cli_errors
def list_() -> None:
    """List built-in adapters, installed controls and `geneb.embedders` plugins."""
    from rich.table import Table

    from geneb.extract.registry import describe_embedders

    table = Table(title="geneb models")
    table.add_column("model", no_wrap=True)
    table.add_column("what it is", overflow="fold")
    for name, desc in describe_embedders():
        table.add_row(name, desc)
    console.print(table)
