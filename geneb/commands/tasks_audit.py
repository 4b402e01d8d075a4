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
    from geneb.audit.many import audit_tasks

    records = audit_tasks(names, data_dir=data_dir, refresh=refresh, out=out, say=_say)
    if as_json:
        for r in records:
            typer.echo(json.dumps(r, sort_keys=False))
    else:
        print_table(records)


def print_verdicts(folders: Sequence[Path], cache: str | None = None) -> None:
    """After a fetch: audit each fetched task folder (cached under ``cache``, the fetch's
    cache) and print one verdict line per task."""
    from geneb.audit.many import audit_folders

    for r in audit_folders(folders, cache=cache, say=_say):
        why = f" ({r['reasons'][0]}" if r["reasons"] else ""
        more = (f"; {len(r['reasons']) - 1} more)" if len(r["reasons"]) > 1
                else ")" if r["reasons"] else "")
        typer.echo(f"audit {r['task']}: {r['verdict'].upper()}{why}{more}")
    if folders:
        typer.echo("details: geneb tasks audit NAME")
