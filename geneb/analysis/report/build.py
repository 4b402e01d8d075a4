"""``build_report``: validate, then run every section of :data:`SECTIONS` into one page.

Which cells feed which analysis (also written into the report's method statement):

- headline (leaderboard, categories, rankings, scaling, difficulty, uncertainty): linear probe,
  the main C (1 when present), features as stored unless the table only has standardised
  fits, every regime separately, with ``full`` shown first;
- few-shot degradation: the same cells, compared across regimes;
- regularisation sensitivity: the linear probe at every C of the sweep, per regime;
- probe stability: linear (main C) against MLP on the same (regime, model, task, seed).

Analyses the table cannot support (one model, no MLP rows, one C, no parameter counts) are
replaced by a sentence saying why. Everything is checked (table, options, output folder)
before any analysis runs, and the report is built in a staging folder and moved into place,
so a failed build leaves the previous report whole (see :mod:`.output`); SIGTERM and SIGHUP
unwind like Ctrl-C while a report is written (its staging folder is removed), and a report
killed outright leaves one that the next report into that folder removes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from geneb.analysis.capacity import check_edges
from geneb.analysis.domain import TASK_ORGANISMS, read_task_organisms
from geneb.analysis.properties import Catalogue, own_columns, read_model_properties
from geneb.analysis.regression import load_regression
from geneb.analysis.report import output
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page
from geneb.analysis.report.sections import SECTIONS, Section
from geneb.analysis.table import is_regression_row, load_results, restrict
from geneb.constraints import (
    C_VALUE,
    N_BOOT_RULE,
    SEED,
    SHOT,
    SIGNIFICANCE,
    TEXT,
    TIER_EDGE,
    ListOf,
    Nullable,
    Pattern,
    validate_params,
)
from geneb.errors import GenebError
from geneb.protocol import BOOT_SEED
from geneb.results.published import is_published, read_published
from geneb.tasks.cache import terminate_cleanly
from geneb.vocabulary import CAPACITY_TIER_EDGES, N_BOOT_REPORT

#: ``build_report``'s parameters, checked before any work; a plan's ``[report]`` and
#: ``geneb report``'s options use the same constraints. ``n_boot``: at least 100 resamples.
REPORT_PARAMS = {
    "shots": ListOf(SHOT, unique=True),
    "Cs": ListOf(C_VALUE, unique=True),
    "n_boot": N_BOOT_RULE,
    "boot_seed": SEED,
    "significance": SIGNIFICANCE,
    "tier_edges": ListOf(TIER_EDGE),
    # GENEB's published leaderboard to compare with (geneb.analysis.compare_published)
    "compare": Nullable(Pattern(r"geneb|published:.+", "geneb or a published:SOURCE")),
    "in_domain_models": ListOf(TEXT, unique=True),
}


@validate_params(REPORT_PARAMS)
def build_report(
    results: str | os.PathLike[str] | pd.DataFrame,
    out: str | os.PathLike[str],
    *,
    shots: Sequence[str] | None = None,
    Cs: Sequence[float] | None = None,
    scaling_exclude: Sequence[str] = (),
    n_boot: int = N_BOOT_REPORT,
    boot_seed: int = BOOT_SEED,
    significance: float = 0.05,
    sections: Sequence[Section] | None = None,
    model_properties: str | os.PathLike[str] | None = None,
    task_organisms: str | os.PathLike[str] | None = None,
    tier_edges: Sequence[float] = CAPACITY_TIER_EDGES,
    summary: dict[str, Any] | None = None,
    subsampling: str | os.PathLike[str] | None = None,
    audits: str | os.PathLike[str] | None = None,
    catalogue: Catalogue | None = None,
    compare: str | None = None,
    in_domain_models: Sequence[str] | None = None,
    standardize: bool | None = None,
) -> Path:
    """Write ``out/index.html``, ``out/tables/*.csv`` and ``out/figures/*.png``.

    Parameters
    ----------
    results : str, os.PathLike or pandas.DataFrame
        The results table (``geneb probe --results``), a ``published:SOURCE`` leaderboard, or the
        table read.
    out : str or os.PathLike
        New, empty, or a previous report's folder (manifest ``.geneb-report.json``: only its
        files are replaced).
    shots, Cs : sequence or None
        Restrict the table to these regimes (shots) and C values (unknown values are an error); the
        headline C is 1 when present, else the first of ``Cs``.
    scaling_exclude : sequence of str
        Models left out of the scaling fits.
    n_boot : int
        Bootstrap resamples of the intervals (at least 100; default
        ``geneb.vocabulary.N_BOOT_REPORT``).
    boot_seed : int
        Seed of the bootstrap.
    significance : float
        Significance level of the paired tests of adjacent models (Wilcoxon, Holm-corrected)
        and of the tier-gain intervals (1 - significance; default 0.05).
    sections : sequence of Section or None
        The report's sections, in order (default :data:`SECTIONS`).
    model_properties : str, os.PathLike or None
        A CSV/TOML of model properties (:mod:`geneb.analysis.properties`), overriding the
        catalogue for the models it names; its own columns (``architecture``, ``pooling``,
        ...) give the matched comparisons and the comparison with GENEB.
    task_organisms : str, os.PathLike or None
        A CSV task,organism: the tasks' organism classes for the in-domain comparison.
    tier_edges : sequence of float
        Parameter counts cutting the capacity tiers (default
        ``geneb.vocabulary.CAPACITY_TIER_EDGES``).
    summary : dict or None
        When given, receives what ``geneb report --json`` prints.
    subsampling : str, os.PathLike or None
        A curve CSV of ``geneb probe-subsample --out`` (a section of its own).
    audits : str, os.PathLike or None
        Task audits (``geneb tasks audit --out``; default: the audit cache).
    catalogue : Catalogue or None
        Published model facts by store key (``geneb.models.catalogue.published_facts``, what
        ``geneb report`` passes); None: the results' measured counts and the user's file only,
        so the numbers depend on the inputs, not on the installed geneb.
    compare : str or None
        ``"geneb"`` (or ``published:SOURCE``) ranks the models among that leaderboard's.
    in_domain_models : sequence of str or None
        The in-domain set of the smaller-beats-larger count (None: the models whose
        pretraining data covers human tasks).
    standardize : bool or None
        The standardised fits (True), or those as stored (False); None: those as stored when
        the table has them.

    Returns
    -------
    pathlib.Path
        The path of ``index.html``.
    """
    edges = check_edges(tier_edges)
    if is_published(results):  # "published:geneb": read once, then a table like any other
        results = read_published(results)
    user_props = None if model_properties is None else read_model_properties(model_properties)
    info = None if user_props is None else own_columns(user_props)
    organisms = None if task_organisms is None else read_task_organisms(task_organisms)
    curve = None if subsampling is None else _read_curve(subsampling)
    owned = output.check_output(out_p := Path(out))
    reg = load_regression(results)
    if len(reg) and is_regression_row(_raw(results)).all():  # regression tasks only
        return _regression_only(out_p, owned, reg)
    df_all = load_results(results)
    df = restrict(df_all, regimes=shots, Cs=Cs)
    if df.empty:
        raise GenebError("no results rows left after restricting to the asked regimes and Cs")
    ctx = ReportContext(
        df_all=df_all,
        df=df,
        info=info,
        Cs=Cs,
        scaling_exclude=tuple(scaling_exclude),
        n_boot=n_boot,
        boot_seed=boot_seed,
        alpha=significance,
        user_props=user_props,
        catalogue=catalogue,
        task_organisms=organisms,
        tier_edges=edges,
        standardize=standardize,
        extra={"regression": reg, "audit_dir": None if audits is None else str(audits),
               **_optional(subsampling=curve, in_domain_models=in_domain_models),
               **_compare(df, compare, info, n_boot, boot_seed)},
    )
    _check_context(ctx, in_domain_models)
    _write_page(out_p, owned, ctx, SECTIONS if sections is None else sections)
    if summary is not None:
        summary.update(ctx.summary)
    return out_p / "index.html"


def _optional(**values: Any) -> dict[str, Any]:
    """The given (not None) extras of the report context; sequences as lists."""
    return {k: list(v) if isinstance(v, (list, tuple)) else v
            for k, v in values.items() if v is not None}


def _check_context(ctx: ReportContext, in_domain_models: Sequence[str] | None) -> None:
    """Before any analysis: every task organism is a known class, and every in-domain model
    is a model of the results."""
    bad = {t: o for t, o in ctx.organisms.items() if o not in TASK_ORGANISMS}
    if bad:
        t = sorted(bad)[0]
        raise GenebError(
            f"results table: task {t!r} has organism {bad[t]!r}; expected one of "
            f"{list(TASK_ORGANISMS)}"
        )
    unknown = sorted(set(in_domain_models or ()) - set(ctx.models))
    if unknown:
        models = ctx.models
        raise GenebError(f"in_domain_models: model {unknown[0]!r} is not in the results; "
                         f"expected one of {models[:8]}{' ...' if len(models) > 8 else ''}",
                         param="in_domain_models")


def _compare(df: pd.DataFrame, compare: str | None, info: pd.DataFrame | None, n_boot: int,
             boot_seed: int) -> dict[str, Any]:
    """``{"compare": the comparison}`` with a published leaderboard (``"geneb"``:
    ``published:geneb``, :mod:`geneb.analysis.compare_published`), before any page is
    written; ``{}`` without ``compare``."""
    if compare is None:
        return {}
    from geneb.analysis.compare_published import compare_with_published

    source = "published:geneb" if compare == "geneb" else compare
    return {"compare": compare_with_published(df, source, n_boot=n_boot, seed=boot_seed,
                                              info=info)}


def _read_curve(subsampling: str | os.PathLike[str]) -> pd.DataFrame:
    """The curve CSV of ``geneb probe-subsample --out`` (imported late: probe is heavier)."""
    from geneb.probe.subsample import read_curve

    return read_curve(Path(subsampling))


def _write_page(out: Path, owned: set[str], ctx: ReportContext,
                sections: Sequence[Section]) -> None:
    """Run every section into a staging folder, then move it into place (or discard it)."""
    with terminate_cleanly():
        _write_staged(out, owned, ctx, sections)


def _write_staged(out: Path, owned: set[str], ctx: ReportContext,
                  sections: Sequence[Section]) -> None:  # fmt: skip
    staged = output.staging_dir(out)
    try:
        page = Page(staged)
        for section in sections:
            section(page, ctx)
        page.p(
            f"Tables ({len(page.tables)}): "
            + ", ".join(f"tables/{t}.csv" for t in page.tables)
            + ".",
            "note",
        )
        (staged / "index.html").write_text(page.html("GENEB report"), encoding="utf-8")
    except BaseException:
        output.discard(staged)
        raise
    output.commit(out, staged, owned)


def _raw(results: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    from geneb.analysis.table import _read_parquet

    return results if isinstance(results, pd.DataFrame) else _read_parquet(Path(results))


def _regression_only(out: Path, owned: set[str], reg: pd.DataFrame) -> Path:
    """A table of regression tasks only: the page is their section (no MCC analyses)."""
    from geneb.analysis.report.sections.regression import regression_section

    with terminate_cleanly():
        staged = output.staging_dir(out)
        try:
            page = Page(staged)
            page.h(1, "GENEB report")
            regression_section(page, reg)
            (staged / "index.html").write_text(page.html("GENEB report"), encoding="utf-8")
        except BaseException:
            output.discard(staged)
            raise
        output.commit(out, staged, owned)
    return out / "index.html"
