"""`geneb probe-subsample`: probe MCC against training-subsample size (GENEB's row cap)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from geneb.commands._common import cli_errors
from geneb.vocabulary import DEFAULT_SEEDS, as_list_text


@cli_errors
def probe_subsample(
    store: Annotated[Path, typer.Option("--store", help="Feature store to read embeddings from.")],
    model: Annotated[list[str], typer.Option("--model", help="Model id (repeat for several).")],
    task: Annotated[list[str], typer.Option("--task", help="Task id (repeat for several).")],
    sizes: Annotated[
        str | None,
        typer.Option(
            "--sizes",
            help="Comma-separated subsample sizes (default: 1/8, 1/4, 1/2 and all of the "
            "100,000-row cap, for tasks above it).",
        ),
    ] = None,
    seeds: Annotated[str, typer.Option("--seeds", help="Comma-separated seeds.")] = (
        as_list_text(DEFAULT_SEEDS)
    ),
    C: Annotated[float, typer.Option("--C", help="Inverse regularisation strength.")] = 1.0,  # noqa: N803
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
    import pandas as pd

    from geneb.constraints import validate_all
    from geneb.probe.subsample import (
        SUBSAMPLE_PARAMS,
        TOL,
        check_curve_out,
        default_sizes,
        stability_summary,
        subsample_curve,
    )

    # the library's declarations, checked before the first pair (errors name the flags)
    opts = validate_all({**SUBSAMPLE_PARAMS, "tol": TOL},
                        {"sizes": sizes or None, "seeds": seeds, "C": C, "tol": tol,
                         "backend": backend})
    size_list, seed_list = list(opts["sizes"] or ()), list(opts["seeds"])
    if out is not None:
        check_curve_out(out)
    curves, skipped = [], []
    for m in model:
        for t in task:
            chosen = size_list or default_sizes(_n_train(store, m, t))
            if not chosen:
                skipped.append(f"{m}/{t}: the train split is not above the cap")
                continue
            curves.append(
                subsample_curve(str(store), m, t, chosen, seed_list, C=C, backend=backend,
                                standardize=standardize)  # fmt: skip
            )
    curve = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame()
    summary = stability_summary(curve, tol) if len(curve) else pd.DataFrame()
    if out is not None and len(curve):
        _write_curve(curve, out)
    if as_json:
        rec = {"curve": curve.to_dict("records"), "summary": _records(summary),
               "skipped": skipped}  # fmt: skip
        typer.echo(json.dumps(rec, indent=1))
        return
    for line in skipped:
        typer.echo(f"skipped {line}")
    if len(summary):
        typer.echo(summary.to_string(index=False))


def _write_curve(curve, out: Path) -> None:  # noqa: ANN001
    """The curve CSV, its text cells escaped as the report's tables are (a model or task name
    starting with ``=`` is not run by a spreadsheet), written atomically."""
    from geneb._fs import write_with
    from geneb.analysis.report.page import csv_safe

    write_with(out, lambda tmp: csv_safe(curve).to_csv(tmp, index=False))


def _n_train(store: Path, model: str, task: str) -> int:
    from geneb.store import FeatureStore

    labels, _, _ = FeatureStore(store, "r").labels_rows(model, task, "train")
    return len(labels)


def _records(df) -> list[dict]:  # noqa: ANN001
    """JSON rows (NaN -> None)."""
    return [
        {k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
        for r in df.astype(object).to_dict("records")
    ]
