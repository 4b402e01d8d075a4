"""``geneb run PLAN.toml``: extract -> probe -> report from one plan file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geneb.commands._common import cli_errors, show_progress


@cli_errors
def run(
    plan: Annotated[Path, typer.Argument(help="Plan file (TOML): store, models, tasks, grid.")],
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Validate; print what would be computed."),
    ] = False,
    workers: Annotated[
        int | None,
        typer.Option("--workers", min=1, help="Run extraction and probing on N local Dask "
                     "workers (overrides the plan's [extract]/[probe] workers/scheduler)."),
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", help="Run extraction and probing on the running Dask "
                     "cluster at this address (overrides the plan)."),
    ] = None,
) -> None:
    """Run a plan: extract what is missing, probe the new cells, rebuild the report.

    Safe to rerun after an interruption: finished store entries and result cells are kept.
    """
    from geneb.pipeline.execute import dry_run as do_dry_run
    from geneb.pipeline.execute import run_plan
    from geneb.pipeline.plan import load_plan

    p = load_plan(plan, workers=workers, scheduler=scheduler)
    if dry_run:
        for line in do_dry_run(p).lines():
            typer.echo(line)
        return
    summary = run_plan(p, progress=show_progress(), log=typer.echo)
    typer.echo(
        f"done in {summary.seconds:.1f} s: {summary.extracted} entries extracted "
        f"({summary.skipped_entries} already there), {summary.probe_computed} probe cells "
        f"computed ({summary.probe_skipped} already there)"
    )
    if summary.report:
        typer.echo(f"report: {summary.report}")
