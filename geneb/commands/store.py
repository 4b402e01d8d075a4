"""`geneb store ls|info|export|verify`: inspect, check and export a feature store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from geneb.commands._common import cli_errors, console, err_console, wide_console
from geneb.errors import CorruptEntryError, GenebError, unknown_name

app = typer.Typer(no_args_is_help=True, help="Inspect, verify and export a feature store.")

StorePath = Annotated[str, typer.Argument(help="Store folder or fsspec URL (e.g. file://...).")]


def _open(path: str):
    from geneb.store import FeatureStore

    return FeatureStore(path, mode="r")


def _key(store, model: str, task: str, split: str):
    """The StoreKey, or an unknown-key error naming the nearest keys and a count."""
    from geneb.store import StoreKey
    from geneb.store.keys import unknown_store_key

    key = StoreKey(model, task, split)
    if store.status(key) == "missing":
        raise unknown_store_key(str(key), (str(k) for k in store.keys()), store.path)
    return key


@app.command("ls")
@cli_errors
def ls(path: StorePath) -> None:
    """List the entries: key, shape, dtype and status (complete / incomplete)."""
    from rich.table import Table
    from rich.text import Text

    store = _open(path)
    table = Table(title=f"feature store {path}")
    for col in ("model", "task", "split"):
        table.add_column(col, no_wrap=True)
    table.add_column("shape", justify="right", no_wrap=True)
    table.add_column("dtype", no_wrap=True)
    table.add_column("status", no_wrap=True)
    keys = store.keys()
    for key in keys:
        info = store.info(key)
        status = info["status"]
        if status == "corrupt":
            status = Text(f"corrupt: {info['problem']}")
        elif status != "complete":
            status = f"incomplete ({info.get('rows_written', 0)}/{info.get('n_rows', '?')} rows)"
        shape = " x ".join(f"{s:,}" for s in info.get("shape", []))
        table.add_row(key.model, key.task, key.split, shape, info.get("dtype", "?"), status)
    out = wide_console(160)
    out.print(table)
    if not keys:
        console.print("(no entries yet: run `geneb extract` to fill the store)")
    hidden = store.scan()
    if hidden:
        err_console.print(f"{len(hidden)} problem(s) outside the listed entries (e.g. "
                          f"{hidden[0][0]}: {hidden[0][1]}); run `geneb store verify {path}`",
                          markup=False, highlight=False, soft_wrap=True)


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
    path: StorePath,
    model: ModelOpt = None,
    task: TaskOpt = None,
    split: SplitOpt = None,
) -> None:
    """Print one entry's status, shape, chunking and provenance as JSON (exit 1: corrupt)."""
    names = _entry_names({"model": model, "task": task, "split": split})
    store = _open(path)
    key = _key(store, *names)
    info = store.info(key)
    typer.echo(json.dumps(info, indent=2, sort_keys=True, default=str))
    if info["status"] == "corrupt":
        raise typer.Exit(1)


@app.command("export")
@cli_errors
def export(
    path: StorePath,
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
    from geneb.store.export import FORMATS, export_entry

    if fmt not in FORMATS:
        raise unknown_name("export format", fmt, FORMATS)
    store = _open(path)
    key = _key(store, model, task, split)
    written = export_entry(store, key, fmt, out)  # type: ignore[arg-type]
    console.print(f"wrote {written} ({fmt}) from {key}")


@app.command("verify")
@cli_errors
def verify(path: StorePath) -> None:
    """Check every chunk's checksum; exit 1 if an entry is incomplete or corrupt."""
    store = _open(path)
    try:
        keys = store.keys()
    except CorruptEntryError:
        keys = []  # verify reports why the entries cannot be listed
    problems = store.verify()  # every entry, plus folders with broken metadata and symlinks
    bad_keys = {where for where, _ in problems if not isinstance(where, str)}
    for where, what in problems:
        err_console.print(f"{where}: {what}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"{len(keys) - len(bad_keys)} of {len(keys)} entries OK in {path}",
                  markup=False, highlight=False, soft_wrap=True)
    others = len(problems) - sum(1 for where, _ in problems if not isinstance(where, str))
    if others:
        console.print(f"{others} problem(s) outside the listed entries (see above)",
                      markup=False, highlight=False)
    if problems:
        raise typer.Exit(1)
