"""`geneb results`: maintain a results table (a folder of parquet parts), export it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geneb.commands._common import cli_errors

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.command("compact")
@cli_errors
def compact(
    results: Annotated[Path, typer.Option("--results", help="Results table (the --results "
                                          "of geneb probe).")],
) -> None:
    """Fold a results table's parts into one (newest row per cell), atomically.

    Safe while other runs write the table; a single-file table of an older geneb is migrated
    first. Reading a compacted table is faster; what it returns does not change.
    """
    from geneb.results import ResultsTable

    n_parts, n_rows = ResultsTable(results).compact()
    typer.echo(f"{results}: {n_parts} part(s) folded into 1 ({n_rows} rows)")


EXPORT_FORMATS = ("geneb-submission",)


@app.command("export")
@cli_errors
def export(
    results: Annotated[str, typer.Option(
        "--results", help="Results table (the --results of geneb probe), or a published "
                          "source such as published:geneb.")],
    model: Annotated[str, typer.Option("--model", "-m", help="The model to export.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The file to write (M.json).")],
    fmt: Annotated[str, typer.Option(
        "--format", help=f"What to write: {', '.join(EXPORT_FORMATS)} (GENEB's leaderboard "
                         "submission file).")] = "geneb-submission",
    partial: Annotated[bool, typer.Option(
        "--partial", help="Write what there is when tasks or seeds are missing (listed in "
                          "meta.partial); without it such a model is refused.")] = False,
    display: Annotated[str | None, typer.Option("--display", help="meta.display.")] = None,
    url: Annotated[str | None, typer.Option("--url", help="meta.url.")] = None,
    training_data: Annotated[str | None, typer.Option(
        "--training-data", help="meta.training_data.")] = None,
    submitted_by: Annotated[str | None, typer.Option(
        "--submitted-by", help="meta.submitted_by.")] = None,
) -> None:
    """Export one model's paper-protocol results (linear probe, C = 1, means over GENEB's five
    seeds) as GENEB's leaderboard submission file; `geneb report --results published:M.json`
    reads it back."""
    from geneb.constraints import StrOptions, validate
    from geneb.results.export import export_submission

    validate(StrOptions(EXPORT_FORMATS), fmt, "--format")
    meta = {"display": display, "url": url, "training_data": training_data,
            "submitted_by": submitted_by}
    path, doc, foreign = export_submission(results, model, out, partial=partial, meta=meta)
    n = {k: len(v) for k, v in doc["results"].items()}
    typer.echo(f"{path}: {doc['model_id']}, " + ", ".join(f"{k} {v} tasks" for k, v in n.items())
               + (" (partial: see meta.partial)" if "partial" in doc["meta"] else ""))
    if foreign:
        typer.echo(f"left out {len(foreign)} task(s) GENEB does not have: "
                   f"{', '.join(foreign[:5])}{' ...' if len(foreign) > 5 else ''}")
