"""The ``geneb`` command: assembles the command groups defined in ``geneb.commands``."""

from __future__ import annotations

import gc

import typer

from geneb.commands import demo as _demo
from geneb.commands import extract as _extract
from geneb.commands import leaderboard as _leaderboard
from geneb.commands import models as _models
from geneb.commands import probe as _probe
from geneb.commands import report as _report
from geneb.commands import results as _results
from geneb.commands import run as _run
from geneb.commands import store as _store
from geneb.commands import subsample as _subsample
from geneb.commands import tasks as _tasks
from geneb.commands import vep as _vep
from geneb.commands._common import repeat_rule_group

#: Every group dispatches through it: one rule for repeated options (``_common.REPEAT_RULE``).
_GROUP = repeat_rule_group()

app = typer.Typer(
    cls=_GROUP,
    name="geneb",
    help="Make genomic foundation models comparable: extract once, probe many times, analyse.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

app.add_typer(_tasks.app, name="tasks", cls=_GROUP, help="List and inspect tasks.")
app.add_typer(_store.app, name="store", cls=_GROUP,
              help="Inspect, verify and export a feature store.")
app.add_typer(_models.app, name="models", cls=_GROUP, help="List model adapters.")
app.add_typer(_results.app, name="results", cls=_GROUP,
              help="Maintain a results table (compact its parts) or export it (GENEB submission).")
app.add_typer(_leaderboard.app, name="leaderboard", cls=_GROUP,
              help="GENEB's published leaderboard: show it, import a newer one.")
app.add_typer(_vep.app, name="vep", cls=_GROUP, help="Zero-shot variant-effect prediction.")
app.command("extract")(_extract.extract)
app.command("probe")(_probe.probe)
app.command("probe-subsample")(_subsample.probe_subsample)
app.command("report")(_report.report)
app.command("run")(_run.run)
app.command("demo")(_demo.demo)


def _print_version(value: bool) -> None:
    if value:
        from geneb import __version__

        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                 help="Print the geneb version and exit."),
) -> None:
    """Make genomic foundation models comparable: extract once, probe many times, analyse."""


@app.command("version")
def version() -> None:
    """Print the geneb version (the same as geneb --version)."""
    _print_version(True)


def plain_help(typer_app: typer.Typer) -> None:
    """Print every command's help as written: no Rich markup, in ``typer_app`` and its groups.

    Typer's Rich help reads ``[extract]/[probe]`` in a help string as two style tags and drops
    them; help texts quote plan sections, ``[default: ...]`` and labels, so they are printed
    with click's plain formatter (which also keeps ``--help`` from importing rich). Applied
    once to the assembled app at the end of this module, after every group is added.
    """
    typer_app.rich_markup_mode = None
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            plain_help(group.typer_instance)


def main() -> None:
    """The console entry point: the typer app, then a cheap interpreter exit.

    ``gc.freeze()`` once the command is done: the shutdown collection then skips the objects
    of every loaded module, which took ~50 ms after pyarrow had been used (a fifth of a
    whole ``geneb probe`` on a small task). Everything the command wrote is closed by then.
    """
    try:
        app()
    finally:
        gc.freeze()


plain_help(app)  # last: after every command and group is registered

if __name__ == "__main__":  # pragma: no cover
    main()
