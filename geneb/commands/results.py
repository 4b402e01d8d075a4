"""`geneb results`: maintain a results table (a folder of parquet parts)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geneb.commands._common import cli_errors

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.command("compact")
@cli_errors
def compact(
    table: Annotated[Path, typer.Argument(help="Results table (the --out of geneb probe).")],
) -> None:
    """Fold a results table's parts into one (newest row per cell), atomically.

    Safe while other runs write the table; a single-file table of an older geneb is migrated
    first. Reading a compacted table is faster; what it returns does not change.
    """
    from geneb.results import ResultsTable

    n_parts, n_rows = ResultsTable(table).compact()
    typer.echo(f"{table}: {n_parts} part(s) folded into 1 ({n_rows} rows)")
