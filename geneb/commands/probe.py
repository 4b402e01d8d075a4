"""`geneb probe`: fit the GENEB probe grid on stored embeddings into a results table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from geneb.commands._common import cli_errors, show_progress
from geneb.vocabulary import (
    DEFAULT_ALPHA_SWEEP,
    DEFAULT_C,
    DEFAULT_C_SWEEP,
    DEFAULT_SEEDS,
    REGIMES,
    as_list_text,
)

#: ``run_probes`` parameters whose option has another Python name (errors name the option).
ALIASES = {"Cs": "C", "alphas": "alpha", "probe": "probe_kind", "probes": "probe_kind",
           "models": "model", "tasks": "task"}


# Options of `geneb probe`, declared once (the signature stays short).
StoreOpt = Annotated[str, typer.Option("--store", help="Feature store to read embeddings from "
                                       "(a folder or fsspec URL).")]
ResultsOpt = Annotated[
    Path, typer.Option("--results", help="Results table: a folder of parquet parts (e.g. "
                       "results.parquet), created or extended; a single-file table of an "
                       "older geneb is migrated.")
]
ModelOpt = Annotated[
    list[str] | None,
    typer.Option("--model", help="Model id in the store (repeat for several; default: all)."),
]
TaskOpt = Annotated[
    list[str] | None,
    typer.Option("--task", help="Task id in the store (repeat for several; default: all)."),
]
ShotsOpt = Annotated[
    list[str] | None,
    typer.Option("--shots", help="Regimes: k-shot counts per class and/or 'full'; comma "
                 f"list or repeated. Default {as_list_text(REGIMES)}."),
]
SeedsOpt = Annotated[
    list[str] | None,
    typer.Option("--seeds", help="Seeds of the k-shot draws; comma list or repeated. "
                 f"Default {as_list_text(DEFAULT_SEEDS)}."),
]
COpt = Annotated[  # noqa: N803 - the option is called --C
    list[str] | None,
    typer.Option(
        "--C",
        help="Inverse L2 strength(s): comma list or repeated, e.g. "
        f"{as_list_text(DEFAULT_C_SWEEP)}. Default {as_list_text(DEFAULT_C)}.",
    ),
]
AlphaOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--alpha",
        help="Ridge penalties for regression tasks: comma list or repeated. Default "
        f"{as_list_text(DEFAULT_ALPHA_SWEEP)}.",
    ),
]
ProbeKindOpt = Annotated[
    list[str] | None,
    typer.Option("--probe", help="linear (logistic regression) and/or mlp (one layer); "
                 "comma list or repeated, run in turn. Default linear."),
]
BackendOpt = Annotated[
    str, typer.Option("--backend", help="auto (cuML if usable, else fast), fast, sklearn, "
                      "torch or cuml.")
]
ProtocolOpt = Annotated[
    str, typer.Option("--protocol", help="converged (every probe solved to its optimum) or "
                      "paper (the GENEB paper's literal LogisticRegression(C, max_iter=1000); "
                      "recorded per row, side by side with converged cells).")
]
WorkersOpt = Annotated[
    int | None,
    typer.Option("--workers", min=1, help="Local worker processes (default: all cores; "
                 "1 runs in this process)."),
]
SchedulerOpt = Annotated[
    str | None,
    typer.Option("--scheduler", help="Address of an existing Dask scheduler (tcp://...)."),
]
StandardizeOpt = Annotated[
    bool,
    typer.Option("--standardize", help="Standardise features on each probe's own train "
                 "rows (recorded)."),
]
TakeAllOpt = Annotated[
    bool,
    typer.Option("--take-all", help="When a class has fewer than k rows, take all of them "
                 "(recorded) instead of failing."),
]


@cli_errors(aliases=ALIASES)
def probe(
    store: StoreOpt,
    results: ResultsOpt,
    model: ModelOpt = None,
    task: TaskOpt = None,
    shots: ShotsOpt = None,
    seeds: SeedsOpt = None,
    C: COpt = None,  # noqa: N803
    alpha: AlphaOpt = None,
    probe_kind: ProbeKindOpt = None,
    backend: BackendOpt = "auto",
    protocol: ProtocolOpt = "converged",
    workers: WorkersOpt = None,
    scheduler: SchedulerOpt = None,
    standardize: StandardizeOpt = False,
    take_all: TakeAllOpt = False,
) -> None:
    """Probe stored embeddings with the GENEB protocol (k-shot and full regimes, seeds, C).

    Regression tasks (float labels) get ridge probes over --alpha, full regime only."""
    opts = dict(locals())  # every option, handed on under run_probes' parameter names
    _run(opts)


#: Options handed to ``run_each_probe`` when given: option name -> parameter name.
_PASSED = {"model": "models", "task": "tasks", "shots": "shots", "seeds": "seeds", "C": "Cs",
           "alpha": "alphas", "workers": "workers", "scheduler": "scheduler",
           "probe_kind": "probes"}


def _run(opts: dict[str, Any]) -> None:
    """``run_each_probe`` on the options; one line per probe as it finishes."""
    from geneb.probe.each import run_each_probe
    from geneb.probe.engine import ProbeRunSummary

    def say(probe_name: str, s: ProbeRunSummary, n_probes: int) -> None:
        typer.echo(  # a plain line: no rich import on the probe path
            f"{probe_name + ': ' if n_probes > 1 else ''}"
            f"{s.n_cells} cells: {s.n_computed} computed ({s.n_fits} fits, {s.n_pairs} "
            f"model x task pairs, backend {s.backend}, protocol {s.protocol}), {s.n_reused} "
            f"reused, {s.n_skipped} already done; {s.seconds:.1f} s -> {s.results}"
        )
        if s.not_converged:
            typer.echo(f"note: {s.convergence_note()}")

    given = {p: opts[o] for o, p in _PASSED.items() if opts[o]}  # None / []: the default
    run_each_probe(opts["store"], opts["results"], **given, backend=opts["backend"],
                   protocol=opts["protocol"], standardize=opts["standardize"],
                   take_all=opts["take_all"], progress=show_progress(), on_probe_done=say)
