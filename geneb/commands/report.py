"""`geneb report`: every analysis of a results table as CSV tables, PNG figures and HTML."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from geneb import params
from geneb.commands._common import cli_errors


def _split(values: list[str] | None) -> list[str]:
    """Accept repeated options and comma-separated lists alike: ``--regime 1,10 --regime full``."""
    out: list[str] = []
    for v in values or []:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return out


@cli_errors
def report(
    results: Annotated[
        Path, typer.Option("--results", "-r", help="Results table (parquet) from `geneb probe`.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Output folder for index.html, tables/, figures/.")
    ],
    model_info: Annotated[
        Path | None,
        typer.Option(
            "--model-info",
            help="CSV with a `model` column and e.g. architecture, tokenization, "
            "pretraining_data; adds matched comparisons.",
        ),
    ] = None,
    regime: Annotated[
        list[str] | None,
        typer.Option(
            "--regime", help="Regimes to include (1, 10, full); repeat or comma-separate."
        ),
    ] = None,
    C: Annotated[
        list[str] | None,
        typer.Option(
            "--C",
            help="C values to include; the headline uses C=1 if included, else the first. "
            "Repeat or comma-separate.",
        ),
    ] = None,
    exclude_from_scaling: Annotated[
        list[str] | None,
        typer.Option("--exclude-from-scaling", help="Models to leave out of the scaling analysis."),
    ] = None,
    n_boot: Annotated[
        int, typer.Option("--n-boot", help="Bootstrap resamples for the intervals (>= 100).")
    ] = 2000,
    audits: Annotated[
        Path | None,
        typer.Option("--audits", help="Folder of task audits (`geneb tasks audit --out`); "
                     "default: the audit cache under $GENEB_CACHE."),
    ] = None,
) -> None:
    """Analyse a results table: leaderboards, categories, scaling, few-shot, stability, CIs."""
    from geneb.analysis.report import build_report

    # option checks, before any work (constraints: geneb.params)
    regimes = params.parse_option_list("--regime", regime, params.SHOT, convert=str.lower)
    Cs = params.parse_option_list("--C", C, params.C_VALUE)  # noqa: N806
    params.check_option("--n-boot", n_boot, params.N_BOOT)
    index = build_report(
        results,
        out,
        model_info=model_info,
        regimes=regimes or None,
        Cs=Cs or None,
        scaling_exclude=tuple(_split(exclude_from_scaling)),
        n_boot=n_boot,
        audits=audits,
    )
    typer.echo(f"report written to {index}")
