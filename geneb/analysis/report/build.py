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
so a failed build leaves the previous report whole (see :mod:`.output`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from geneb import params
from geneb.analysis.metadata import read_model_info
from geneb.analysis.report import output
from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page
from geneb.analysis.report.sections import SECTIONS, Section
from geneb.analysis.table import load_results, restrict
from geneb.analysis.uncertainty import BOOT_SEED, N_BOOT
from geneb.errors import GenebError


def _check_options(n_boot: object, boot_seed: object, alpha: object) -> None:
    """The numeric arguments, against the constraints of :mod:`geneb.params`."""
    params.POSITIVE_INT.check(n_boot, "n_boot")
    params.SEED.check(boot_seed, "boot_seed")
    params.ALPHA.check(alpha, "alpha")


def build_report(
    results: str | os.PathLike[str] | pd.DataFrame,
    out_dir: str | os.PathLike[str],
    *,
    model_info: str | os.PathLike[str] | pd.DataFrame | None = None,
    regimes: Sequence[str] | None = None,
    Cs: Sequence[float] | None = None,
    scaling_exclude: Sequence[str] = (),
    n_boot: int = N_BOOT,
    boot_seed: int = BOOT_SEED,
    alpha: float = 0.05,
    sections: Sequence[Section] | None = None,
    audits: str | os.PathLike[str] | None = None,
) -> Path:
    """Write ``out_dir/index.html``, ``out_dir/tables/*.csv`` and ``out_dir/figures/*.png``.

    ``regimes`` and ``Cs`` restrict the table (unknown values are an error); the headline C is
    1 when present, else the first of ``Cs``. ``sections`` defaults to :data:`SECTIONS`.
    ``out_dir`` must be new, empty, or a previous report's folder (it holds the manifest
    ``.geneb-report.json``); only the previous report's files are replaced. ``audits``: a
    folder of task audits (``geneb tasks audit --out``); default the audit cache. Returns the
    path of ``index.html``.
    """
    _check_options(n_boot, boot_seed, alpha)
    out = Path(out_dir)
    owned = output.check_output(out)
    df_all = load_results(results)
    df = restrict(df_all, regimes=regimes, Cs=Cs)
    if df.empty:
        raise GenebError("no results rows left after restricting to the asked regimes and Cs")
    info = None
    if model_info is not None:
        if isinstance(model_info, pd.DataFrame):
            if "model" not in model_info.columns:
                raise GenebError("model info table: no 'model' column")
            info = model_info.copy()
        else:
            info = read_model_info(model_info)
    ctx = ReportContext(
        df_all=df_all,
        df=df,
        info=info,
        Cs=Cs,
        scaling_exclude=tuple(scaling_exclude),
        n_boot=n_boot,
        boot_seed=boot_seed,
        alpha=alpha,
        extra={"audit_dir": None if audits is None else str(audits)},
    )
    staged = output.staging_dir(out)
    try:
        page = Page(staged)
        for section in SECTIONS if sections is None else sections:
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
    return out / "index.html"
