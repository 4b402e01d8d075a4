"""`geneb report`: every analysis of a results table as CSV tables, PNG figures and HTML."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from geneb.commands._common import cli_errors
from geneb.vocabulary import CAPACITY_TIER_EDGES, N_BOOT_REPORT, as_list_text


def _split(values: list[str] | None) -> list[str]:
    """Accept repeated options and comma-separated lists alike: ``--shots 1,10 --shots full``."""
    out: list[str] = []
    for v in values or []:
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return out


# Options of `geneb report`, declared once (the signature stays short).
ResultsOpt = Annotated[
    Path, typer.Option("--results", "-r", help="Results table (parquet) from `geneb probe`, "
                       "or published:geneb (GENEB's published leaderboard).")
]
OutOpt = Annotated[
    Path, typer.Option("--out", "-o", help="Output folder for index.html, tables/, figures/.")
]
ShotsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--shots",
        help="Regimes to include (k-shot counts and/or full, as probed with `geneb probe "
        "--shots`); repeat or comma-separate.",
    ),
]
COpt = Annotated[
    list[str] | None,
    typer.Option(
        "--C",
        help="C values to include; the headline uses C=1 if included, else the first. "
        "Repeat or comma-separate.",
    ),
]
ExcludeFromScalingOpt = Annotated[
    list[str] | None,
    typer.Option("--exclude-from-scaling", help="Models to leave out of the scaling analysis."),
]
NBootOpt = Annotated[
    int, typer.Option("--n-boot", help="Bootstrap resamples for the intervals (>= 100).")
]
ModelPropertiesOpt = Annotated[
    Path | None,
    typer.Option(
        "--model-properties",
        help="CSV or TOML of model properties (model, n_params, architecture_class, "
        "tokenization_class, pretraining_data_class, organisms, source); overrides the "
        "model catalogue for the models it names (matched by store key). Columns of your "
        "own (e.g. architecture, tokenization, pretraining_data, pooling, recipe) add "
        "matched comparisons and the comparison with GENEB.",
    ),
]
TaskOrganismsOpt = Annotated[
    Path | None,
    typer.Option(
        "--task-organisms",
        help="CSV task,organism (human, mammal, eukaryote, plant, prokaryote, virus) for "
        "the in-domain scale comparison.",
    ),
]
TierEdgesOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--tier-edges",
        help=f"Parameter counts cutting the capacity tiers, increasing "
        f"(default {as_list_text(CAPACITY_TIER_EDGES)}).",
    ),
]
SubsamplingOpt = Annotated[
    Path | None,
    typer.Option(
        "--subsampling",
        help="Curve CSV of `geneb probe-subsample --out`: adds the subsampling-stability "
        "section.",
    ),
]
InDomainModelsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--in-domain-models",
        help="The in-domain models of the smaller-beats-larger count (repeat or "
        "comma-separate); default: those whose pretraining data covers human tasks.",
    ),
]
AsJsonOpt = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print the controlled comparisons (matched_pairs, tiers, "
        "smaller_beats_larger, model_properties) as one JSON object.",
    ),
]
CompareOpt = Annotated[
    str | None,
    typer.Option("--compare", help="geneb: rank your models among GENEB's published 41 on the "
                 "tasks both have (paper-protocol rows only), or a published:SOURCE."),
]
StandardizeOpt = Annotated[
    bool | None,
    typer.Option(
        "--standardize/--no-standardize",
        help="Analyse the cells probed on standardised features, or those on features as "
        "stored; default: as stored when the table has them, else standardised.",
    ),
]
AuditsOpt = Annotated[
    Path | None,
    typer.Option("--audits", help="Folder of task audits (`geneb tasks audit --out`); "
                 "default: the audit cache under $GENEB_CACHE."),
]


@cli_errors(aliases={"Cs": "C"})
def report(
    results: ResultsOpt,
    out: OutOpt,
    shots: ShotsOpt = None,
    C: COpt = None,  # noqa: N803
    exclude_from_scaling: ExcludeFromScalingOpt = None,
    n_boot: NBootOpt = N_BOOT_REPORT,
    model_properties: ModelPropertiesOpt = None,
    task_organisms: TaskOrganismsOpt = None,
    tier_edges: TierEdgesOpt = None,
    subsampling: SubsamplingOpt = None,
    as_json: AsJsonOpt = False,
    audits: AuditsOpt = None,
    compare: CompareOpt = None,
    in_domain_models: InDomainModelsOpt = None,
    standardize: StandardizeOpt = None,
) -> None:
    """Analyse a results table: leaderboards, categories, scaling, few-shot, stability, CIs."""
    opts = dict(locals())  # every option, handed on under its parameter name
    summary: dict[str, Any] = {}
    index = _build(opts, summary)
    if as_json:
        typer.echo(json.dumps({"report": str(index), **summary}, indent=1))
    else:
        typer.echo(f"report written to {index}")


def _shots(opts: dict[str, Any]) -> list[str]:
    """--shots, checked by ``build_report``'s own declaration under the option's name, so an
    error names ``--shots`` (its other options are checked by ``build_report``)."""
    from geneb.analysis.report.build import REPORT_PARAMS
    from geneb.constraints import validate

    if not opts["shots"]:
        return []
    return list(dict.fromkeys(validate(REPORT_PARAMS["shots"], opts["shots"], "shots")))


def _build(opts: dict[str, Any], summary: dict[str, Any]) -> Path:
    """``build_report`` on the options, with the published model facts."""
    from geneb.analysis.report import build_report
    from geneb.models.catalogue import published_facts

    return build_report(
        opts["results"],
        opts["out"],
        shots=_shots(opts) or None,
        Cs=opts["C"] or None,
        scaling_exclude=tuple(_split(opts["exclude_from_scaling"])),
        n_boot=opts["n_boot"],
        model_properties=opts["model_properties"],
        task_organisms=opts["task_organisms"],
        tier_edges=opts["tier_edges"] or CAPACITY_TIER_EDGES,
        summary=summary,
        subsampling=opts["subsampling"],
        audits=opts["audits"],
        catalogue=published_facts,
        compare=opts["compare"],
        in_domain_models=_split(opts["in_domain_models"]) or None,
        standardize=opts["standardize"],
    )
