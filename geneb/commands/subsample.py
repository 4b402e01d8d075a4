"""`geneb probe-subsample`: probe MCC against training-subsample size (GENEB's row cap)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from geneb.commands._common import cli_errors
from geneb.vocabulary import DEFAULT_C, DEFAULT_SEEDS, as_list_text


@cli_errors(aliases={"Cs": "C", "models": "model", "tasks": "task"})
def probe_subsample(
    store: Annotated[str, typer.Option("--store", help="Feature store to read embeddings from "
                                       "(a folder or fsspec URL).")],
    model: Annotated[list[str], typer.Option("--model", help="Model id (repeat for several).")],
    task: Annotated[list[str], typer.Option("--task", help="Task id (repeat for several).")],
    sizes: Annotated[
        list[str] | None,
        typer.Option(
            "--sizes",
            help="Subsample sizes: comma list or repeated (default: 1/8, 1/4, 1/2 and all of "
            "the 100,000-row cap, for tasks above it).",
        ),
    ] = None,
    seeds: Annotated[list[str] | None, typer.Option(
        "--seeds", help="Seeds of the subsample draws; comma list or repeated. Default "
        f"{as_list_text(DEFAULT_SEEDS)}.", show_default=False)] = None,
    C: Annotated[list[str] | None, typer.Option(  # noqa: N803
        "--C", help="Inverse L2 strength(s): comma list or repeated; one curve per C. Default "
        f"{as_list_text(DEFAULT_C)}.", show_default=False)] = None,
    backend: Annotated[str, typer.Option("--backend", help="Linear-probe backend.")] = "auto",
    standardize: Annotated[
        bool, typer.Option("--standardize", help="Standardise features (train statistics).")
    ] = False,
    tol: Annotated[
        float, typer.Option("--tol", help="Stabilised: the last mean MCC change is at most this.")
    ] = 0.01,
    out: Annotated[
        Path | None, typer.Option("--out", help="CSV file for the curve (one row per fit).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print {curve, summary, skipped} as JSON.")
    ] = False,
) -> None:
    """Fit the linear probe on stratified train subsamples of several sizes, the same seeds at
    each size, and say whether MCC has stabilised (docs/probing.md)."""
    from geneb.pipeline.subsample import subsample_study

    given: dict[str, Any] = {k: v for k, v in (("sizes", sizes), ("seeds", seeds), ("Cs", C))
                             if v}
    study = subsample_study(store, model, task, **given, backend=backend,
                            standardize=standardize, tol=tol, out=out)
    if as_json:
        rec = {"curve": study.curve.to_dict("records"), "summary": _records(study.summary),
               "skipped": study.skipped}  # fmt: skip
        typer.echo(json.dumps(rec, indent=1))
        return
    for line in study.skipped:
        typer.echo(f"skipped {line}")
    if len(study.summary):
        typer.echo(study.summary.to_string(index=False))


def _records(df: Any) -> list[dict[str, Any]]:
    """JSON rows (NaN -> None)."""
    return [
        {k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
        for r in df.astype(object).to_dict("records")
    ]
