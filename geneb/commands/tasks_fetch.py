"""`geneb tasks fetch`: download, verify, convert and cache catalogue tasks (docs/tasks.md).

Registered on the ``geneb tasks`` app by :mod:`geneb.commands.tasks`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from geneb.commands._common import cli_errors
from geneb.commands.tasks_audit import print_verdicts

CatalogueOpt = Annotated[
    str | None,
    typer.Option(
        "--catalogue",
        help="Catalogue JSON file to use instead of geneb's built-in one.",
        show_default=False,
    ),
]


NamesOpt = Annotated[
    list[str] | None,
    typer.Argument(help="Catalogue task names, suite names and/or task aliases (GENEB ids).",
                   show_default=False),
]
StudyOpt = Annotated[
    str | None,
    typer.Option("--study", help="Fetch every task a study names (GENEB: its 100 tasks).",
                 show_default=False),
]
StudyDataOpt = Annotated[
    bool,
    typer.Option("--study-data", help="Fetch GENEB's own copies of its tasks (its task "
                 "dataset at its pin), named by GENEB's task ids, instead of each task's "
                 "source: the rows GENEB's probes saw."),
]
RevisionOpt = Annotated[
    str | None,
    typer.Option("--revision", help="A full commit of the hub dataset the tasks come from, "
                 "for a source that publishes no revision (default: the hub's current "
                 "commit, recorded) or to fetch another commit than the catalogue's.",
                 show_default=False),
]
CacheOpt = Annotated[
    str | None,
    typer.Option(
        "--cache",
        help="Cache folder (default: $GENEB_CACHE, else ~/.cache/geneb).",
        show_default=False,
    ),
]
SkipRefusedOpt = Annotated[
    bool,
    typer.Option(
        "--skip-refused",
        help="Fetch what can be fetched and list the refused tasks, instead of stopping.",
    ),
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Show the plan; download nothing.")
]
ReferenceOpt = Annotated[
    str | None,
    typer.Option(
        "--reference",
        help="A local reference genome FASTA (plain or .gz) for variant sets whose "
        "reference has no published sha256 (TraitGym: GRCh38; long-range benchmark: hg38). "
        "Its sha256 is recorded; only the windows the variants need are kept.",
        show_default=False,
    ),
]
FlankOpt = Annotated[
    int | None,
    typer.Option(
        "--flank",
        help="Bases kept on each side of a variant with --reference (default 4096: "
        "windows up to 8,192 bases).",
        show_default=False,
    ),
]


@cli_errors
def fetch(
    names: NamesOpt = None,
    study: StudyOpt = None,
    study_data: StudyDataOpt = False,
    revision: RevisionOpt = None,
    cache: CacheOpt = None,
    skip_refused: SkipRefusedOpt = False,
    dry_run: DryRunOpt = False,
    reference: ReferenceOpt = None,
    flank: FlankOpt = None,
    catalogue: CatalogueOpt = None,
) -> None:
    """Download, verify (pinned revision or sha256), convert and cache catalogue tasks.

    Hub files are fetched at a full commit: the catalogue's pin, --revision, or the hub's
    current commit where no revision is published (recorded in fetch.json with each file's
    sha256, and said). Fetched tasks resolve by name everywhere a task name is accepted (tasks
    show, extract, run plans), offline. A second fetch of the same task is a no-op; a cached
    task is never replaced (a hub that moved on is warned about).
    """
    from geneb.tasks.cache import cache_root
    from geneb.tasks.fetch import plan_fetch, run_fetch

    user_ref = _user_reference(reference, flank)
    entries = _entries(names or [], study, study_data, catalogue)
    plan = plan_fetch(entries, cache, user_ref, revision)
    _show_plan(plan, skip_refused, dry_run)
    if dry_run:
        return

    fetched: list[Any] = []

    def report(step: Any, record: dict[str, Any]) -> None:
        rows = ", ".join(f"{k} {v:,}" for k, v in record["rows"].items())
        typer.echo(f"fetched {step.entry.name} ({rows}) -> {step.target}")
        if ref := record.get("user_reference"):
            typer.echo(f"  reference {ref['path']} sha256 {ref['sha256']}, +-{ref['flank']} kept")
        if step.entry.kind != "variants":
            fetched.append(step.target)

    run_fetch(plan, on_done=report, on_note=lambda step, text: typer.echo(text))
    print_verdicts(fetched, cache)
    if cache is not None and cache_root(cache).resolve() != cache_root().resolve():
        typer.echo(
            f"note: tasks resolve by name from $GENEB_CACHE (now {cache_root()}); set "
            f"GENEB_CACHE={cache_root(cache)} to use these"
        )


def _entries(names: list[str], study: str | None, study_data: bool,
             catalogue: str | None) -> Any:
    """The catalogue entries asked for: names and a study's tasks, or GENEB's own copies."""
    from geneb.errors import TaskError
    from geneb.tasks.aliases import study_names
    from geneb.tasks.catalogue import load_task_catalogue, select
    from geneb.tasks.geneb_copies import select_copies

    if study_data:
        if study not in (None, "GENEB"):
            raise TaskError(f"--study-data: only GENEB publishes its own task data, not {study}")
        return select_copies(names)
    asked = [*(study_names(study) if study else []), *names]
    if not asked:
        raise TaskError("nothing to fetch: give task or suite names, or --study STUDY")
    return select(asked, load_task_catalogue(catalogue))


def _user_reference(reference: str | None, flank: int | None) -> Any:
    """``--reference`` / ``--flank`` as a :class:`geneb.tasks.reference.UserReference`."""
    from geneb.constraints import POSITIVE_INT, validate
    from geneb.errors import TaskError
    from geneb.tasks.reference import DEFAULT_FLANK, UserReference

    if flank is not None:
        validate(POSITIVE_INT, flank, "flank")  # the CLI names the flag (--flank)
    if reference is None:
        if flank is not None:
            raise TaskError("--flank is given without --reference (it sizes its windows)")
        return None
    return UserReference(Path(reference), DEFAULT_FLANK if flank is None else flank)


def _show_plan(plan: Any, skip_refused: bool, dry_run: bool) -> None:
    """Refuse when an entry is refused (unless --skip-refused/--dry-run); print other steps."""
    from geneb.errors import TaskError

    refused = plan.refused()
    if refused and not skip_refused and not dry_run:
        lines = "; ".join(f"{s.entry.name}: {s.reason}" for s in refused)
        raise TaskError(
            f"{len(refused)} of {len(plan.steps)} task(s) cannot be fetched ({lines}); nothing "
            f"was downloaded (use --skip-refused to fetch the others)"
        )
    for s in plan.steps:
        if dry_run or s.action != "fetch":
            typer.echo(f"{s.action:7} {s.entry.name}: {s.reason}")
    if dry_run:
        n = {a: sum(s.action == a for s in plan.steps) for a in ("fetch", "skip", "refuse")}
        typer.echo(f"{len(plan.steps)} task(s): {n['fetch']} to fetch, {n['skip']} cached, "
                   f"{n['refuse']} refused; nothing was downloaded (--dry-run)")
