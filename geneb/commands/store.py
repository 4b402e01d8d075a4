"""`geneb store ls|info|export|verify`: inspect, check and export a feature store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from geneb.commands._common import cli_errors, console, err_console, wide_console
from geneb.errors import GenebError

app = typer.Typer(no_args_is_help=True, help="Inspect, verify and export a feature store.")

StoreOpt = Annotated[str, typer.Option("--store", help="Store folder or fsspec URL (e.g. "
                                       "file://...).")]


@app.command("ls")
@cli_errors
def ls(store: StoreOpt) -> None:
    """List the entries: key, shape, dtype and status (complete / incomplete)."""
    from rich.table import Table
    from rich.text import Text

    from geneb.store.inspect import list_entries

    entries, hidden = list_entries(store)
    table = Table(title=f"feature store {store}")
    for col in ("model", "task", "split"):
        table.add_column(col, no_wrap=True)
    table.add_column("shape", justify="right", no_wrap=True)
    table.add_column("dtype", no_wrap=True)
    table.add_column("status", no_wrap=True)
    for key, info in entries:
        status: str | Text = info["status"]
        if status == "corrupt":
            status = Text(f"corrupt: {info['problem']}")
        elif status != "complete":
            status = f"incomplete ({info.get('rows_written', 0)}/{info.get('n_rows', '?')} rows)"
        shape = " x ".join(f"{s:,}" for s in info.get("shape", []))
        table.add_row(key.model, key.task, key.split, shape, info.get("dtype", "?"), status)
    out = wide_console(160)
    out.print(table)
    if not entries:
        console.print("(no entries yet: run `geneb extract` to fill the store)")
    if hidden:
        err_console.print(f"{len(hidden)} problem(s) outside the listed entries (e.g. "
                          f"{hidden[0][0]}: {hidden[0][1]}); run `geneb store verify --store "
                          f"{store}`", markup=False, highlight=False, soft_wrap=True)


ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="Model id as stored.")]
TaskOpt = Annotated[str | None, typer.Option("--task", "-t", help="Task name.")]
SplitOpt = Annotated[str | None, typer.Option("--split", "-s", help="Split name, e.g. train.")]


def _entry_names(options: dict[str, str | None]) -> tuple[str, str, str]:
    """(model, task, split) from ``--model/--task/--split``, each required."""
    out = []
    for name in ("model", "task", "split"):
        value = options[name]
        if value is None:
            raise GenebError(f"--{name}: expected the entry's {name} (see `geneb store ls`)")
        out.append(value)
    return out[0], out[1], out[2]


@app.command("info")
@cli_errors
def info(
    store: StoreOpt,
    model: ModelOpt = None,
    task: TaskOpt = None,
    split: SplitOpt = None,
) -> None:
    """Print one entry's status, shape, chunking and provenance as JSON (exit 1: corrupt)."""
    from geneb.store.inspect import entry_info

    names = _entry_names({"model": model, "task": task, "split": split})
    info = entry_info(store, *names)
    typer.echo(json.dumps(info, indent=2, sort_keys=True, default=str))
    if info["status"] == "corrupt":
        raise typer.Exit(1)


@app.command("export")
@cli_errors
def export(
    store: StoreOpt,
    model: Annotated[str, typer.Option("--model", "-m", help="Model id as stored.")],
    task: Annotated[str, typer.Option("--task", "-t", help="Task name.")],
    split: Annotated[str, typer.Option("--split", "-s", help="Split name, e.g. train.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write.")],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            help="npz (embeddings, labels, row) or parquet (row, label, embedding as a "
            "fixed-size list column).",
        ),
    ] = "npz",
) -> None:
    """Export one complete entry (checksums verified) to an .npz or .parquet file."""
    from geneb.store.inspect import export_named_entry

    written, key = export_named_entry(store, model, task, split, fmt, out)
    console.print(f"wrote {written} ({fmt}) from {key}")


@app.command("verify")
@cli_errors
def verify(store: StoreOpt) -> None:
    """Check every chunk's checksum; exit 1 if an entry is incomplete or corrupt."""
    from geneb.store.inspect import verify_entries

    n_keys, problems = verify_entries(store)
    bad_keys = {where for where, _ in problems if not isinstance(where, str)}
    for where, what in problems:
        err_console.print(f"{where}: {what}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"{n_keys - len(bad_keys)} of {n_keys} entries OK in {store}",
                  markup=False, highlight=False, soft_wrap=True)
    others = len(problems) - sum(1 for where, _ in problems if not isinstance(where, str))
    if others:
        console.print(f"{others} problem(s) outside the listed entries (see above)",
                      markup=False, highlight=False)
    if problems:
        raise typer.Exit(1)
