"""`geneb tasks audit`: leaks and shortcuts of tasks, with a verdict each (docs/tasks.md).

Registered on the ``geneb tasks`` app by :mod:`geneb.commands.tasks`; the fetch command calls
:func:`print_verdicts` on what it fetched.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from geneb.commands._common import cli_errors, wide_console

COLUMNS: tuple[tuple[str, str], ...] = (
    ("test", "n_test"),
    ("exact", "exact_duplicates_across_splits"),
    ("conflicts", "label_conflicts_across_splits"),
    ("revcomp", "revcomp_duplicates_across_splits"),
    ("near", "near_duplicates_across_splits"),
    ("twin opp.", "composition_twin_opposite_label_fraction"),
)


def _check_out(out: str | None) -> Path | None:
    """The --out folder, created; a clear error when it cannot be one."""
    from geneb.errors import GenebError

    if out is None:
        return None
    path = Path(out).expanduser()
    if path.exists() and not path.is_dir():
        raise GenebError(f"--out {out}: exists and is not a folder (expected a folder for the "
                         "audit JSON files)")
    path.mkdir(parents=True, exist_ok=True)
    return path


def audit_records(
    names: Sequence[str], data_dir: str | None = None, refresh: bool = False,
    cache: str | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """Load every task first (a bad name fails before any work), then audit each (cached):
    (the task's audit file name, its record) per task. A cached audit that cannot be used is
    recomputed with one line on stderr."""
    from geneb.audit import audit_file_name, cached_audit
    from geneb.tasks.folders import resolve_task

    tasks = [resolve_task(n, data_dir) for n in names]
    return [(audit_file_name(t), cached_audit(t, refresh=refresh, cache=cache, say=_say))
            for t in tasks]


def _say(line: str) -> None:
    typer.echo(line, err=True)


def print_table(records: Sequence[dict[str, Any]]) -> None:
    """One row per task, then each task's reasons."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="geneb task audit (test rows vs train)")
    table.add_column("task", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for head, _ in COLUMNS:
        table.add_column(head, justify="right", no_wrap=True)
    table.add_column("best shortcut (MCC)", no_wrap=True)
    for r in records:
        cells = [Text(str(r["task"])), Text(r["verdict"].upper())]
        for _, key in COLUMNS:
            v = r[key]
            cells.append(Text(f"{v:.1%}" if isinstance(v, float) else f"{v:,}"))
        cells.append(Text(f"{r['best_shortcut']} ({r['best_shortcut_mcc']:.3f})"))
        table.add_row(*cells)
    wide_console(140).print(table)
    for r in records:
        for reason in r["reasons"]:
            typer.echo(f"{r['task']}: {reason}")


@cli_errors
def audit(
    names: Annotated[
        list[str], typer.Argument(help="Task names (built-in, under the data dir, fetched) or "
                                       "task folder paths.")
    ],
    data_dir: Annotated[
        str | None,
        typer.Option("--data-dir", help="Folder holding task folders (default: "
                     "$GENEB_DATA_DIR).", show_default=False),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object per task, one per line.")
    ] = False,
    out: Annotated[
        str | None,
        typer.Option("--out", help="Also write each task's audit to OUT/<task>.json.",
                     show_default=False),
    ] = None,
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Recompute even when a cached audit exists.")
    ] = False,
) -> None:
    """Audit tasks for leaks and shortcuts: duplicates across splits (exact, reverse
    complement, near), composition twins, shortcut baselines; a verdict per task.

    Each audit is cached under $GENEB_CACHE/audit by the task's fingerprints; the report
    reads it. The verdict rule and thresholds: docs/tasks.md.
    """
    from geneb.audit.record import seal
    from geneb.store._files import write_json

    out_dir = _check_out(out)
    named = audit_records(names, data_dir, refresh)
    for file_name, r in named:
        if out_dir is not None:  # the name is geneb's safe key of the loaded task's name
            write_json(out_dir / file_name, seal(r))
        if as_json:
            typer.echo(json.dumps(r, sort_keys=False))
    if not as_json:
        print_table([r for _, r in named])


def print_verdicts(folders: Sequence[Path], cache: str | None = None) -> None:
    """After a fetch: audit each fetched task folder (cached under ``cache``, the fetch's
    cache) and print one verdict line per task."""
    from geneb.audit import cached_audit
    from geneb.tasks.loader import load_task_folder

    for folder in folders:
        r = cached_audit(load_task_folder(folder), cache=cache, say=_say)
        why = f" ({r['reasons'][0]}" if r["reasons"] else ""
        more = (f"; {len(r['reasons']) - 1} more)" if len(r["reasons"]) > 1
                else ")" if r["reasons"] else "")
        typer.echo(f"audit {r['task']}: {r['verdict'].upper()}{why}{more}")
    if folders:
        typer.echo("details: geneb tasks audit NAME")
