"""Reading and validating the results table, and choosing which cells feed an analysis.

Every analysis in this package is a pure function of the results table (see
``geneb.results.schema``). This module is the single place that checks the table, removes
superseded duplicate rows and names the columns that identify a probe configuration.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from geneb.errors import GenebError, unknown_name
from geneb.results.published import is_published, read_published
from geneb.results.schema import ANALYSIS_KEY

#: The ``probe`` of regression tasks' rows (ridge; kept apart: ``geneb.analysis.regression``).
RIDGE = "ridge"

#: Columns that identify one probe configuration; analyses group by them so that numbers from
#: different probes, regularisation strengths or regimes are never mixed.
CONTEXT: tuple[str, ...] = ("probe", "standardize", "C", "regime")

#: Columns every analysis needs.
REQUIRED: tuple[str, ...] = ("model", "task", "category", "regime", "seed", "C", "probe", "mcc")

#: Optional columns and the value used when an older or hand-made table lacks them.
OPTIONAL_DEFAULTS: dict[str, object] = {
    "standardize": False,
    "n_test": np.nan,
    "n_params": np.nan,
    "converged": True,
    "n_iter": np.nan,
    "backend": "",
    "protocol": "converged",
    "geneb_version": "",
    "sklearn_version": "",
    "created": "",
    "k": np.nan,
    "alpha": np.nan,  # ridge rows only (regression tasks); part of the fit key
}

#: The key of one fit; a table with two rows for the same key keeps the latest (``created``).
#: Defined once in ``geneb.results.schema`` (the cell identity without the store version).
FIT_KEY: tuple[str, ...] = ANALYSIS_KEY


def load_results(results: str | os.PathLike[str] | pd.DataFrame) -> pd.DataFrame:
    """Read (parquet path, or a ``published:`` source such as ``"published:geneb"``) or copy
    (DataFrame) a results table and validate it.

    Returns a new DataFrame with typed columns, optional columns filled, and duplicate fits
    (same :data:`FIT_KEY`, e.g. after a store entry was rewritten) reduced to the latest row.
    """
    if isinstance(results, pd.DataFrame):
        df = results.copy()
        where = "results table"
    elif is_published(results):  # "published:geneb": GENEB's leaderboard as results rows
        df = read_published(results)
        where = str(results)
    else:
        path = Path(results)
        where = str(path)
        if not path.exists():
            raise GenebError(f"no results table at {where!r} (the path does not exist)")
        df = _read_parquet(path)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise GenebError(
            f"{where}: missing column(s) {', '.join(missing)}; a results table needs "
            f"{', '.join(REQUIRED)} (see geneb.results.schema)"
        )
    if df.empty:
        raise GenebError(f"{where}: the results table has no rows")
    reg = is_regression_row(df)  # regression tasks: summarised apart, never with MCC
    if reg.all():
        raise GenebError(f"{where}: the results table has only regression (ridge) rows; "
                         "see geneb.analysis.regression")
    df = df[~reg]
    for col, default in OPTIONAL_DEFAULTS.items():
        if col not in df.columns:
            df[col] = default
    df = df.reset_index(drop=True)
    for col in ("model", "task", "category", "regime", "probe"):
        bad = df[col].isna()
        if bad.any():
            row = int(np.flatnonzero(bad.to_numpy())[0])
            raise GenebError(f"{where}: row {row}: column {col!r} is empty; expected a string")
        df[col] = df[col].astype(str)
    for col in ("mcc", "C", "n_test", "n_params", "n_iter", "seed"):
        try:
            df[col] = pd.to_numeric(df[col]).astype(float)
        except (TypeError, ValueError) as e:
            raise GenebError(f"{where}: column {col!r} must be numeric ({e})") from None
    bad_regime = ~df["regime"].map(_is_regime)
    if bad_regime.any():
        row = int(np.flatnonzero(bad_regime.to_numpy())[0])
        raise GenebError(
            f"{where}: row {row}: regime {df.at[row, 'regime']!r} is not 'full' or a shot count "
            "such as '1' or '10'"
        )
    mcc = df["mcc"].to_numpy()
    bad_mcc = ~np.isfinite(mcc) | (mcc < -1 - 1e-9) | (mcc > 1 + 1e-9)
    if bad_mcc.any():
        row = int(np.flatnonzero(bad_mcc)[0])
        raise GenebError(
            f"{where}: row {row}: mcc {float(mcc[row])} is not a number in [-1, 1] "
            f"(model {df.at[row, 'model']!r}, task {df.at[row, 'task']!r})"
        )
    df["standardize"] = df["standardize"].fillna(False).astype(bool)
    df["converged"] = df["converged"].fillna(True).astype(bool)
    # a task belongs to one category
    cats = df.groupby("task")["category"].nunique()
    if (cats > 1).any():
        task = str(cats[cats > 1].index[0])
        found = sorted(df.loc[df["task"] == task, "category"].unique())
        raise GenebError(f"{where}: task {task!r} appears with several categories {found}")
    order = df["created"].astype(str)
    df["protocol"] = df["protocol"].fillna("converged").astype(str)
    # a linear cell's backend is not part of its identity (every backend reaches the optimum)
    backend = df["backend"].fillna("").astype(str).where(df["probe"] != "linear", "")
    df = df.assign(_order=order, _backend=backend).sort_values("_order", kind="stable")
    key = ["_backend" if c == "backend" else c for c in FIT_KEY]
    df = df.drop_duplicates(key, keep="last").drop(columns=["_order", "_backend"])
    return df.sort_index().reset_index(drop=True)


def is_regression_row(df: pd.DataFrame) -> pd.Series:
    """Which rows are ridge probes of regression tasks."""
    return df["probe"].astype(str) == RIDGE if "probe" in df else pd.Series(False, df.index)


def _read_parquet(path: Path) -> pd.DataFrame:
    from geneb.results import ResultsTable  # knows the schema versions and the parts

    try:
        return ResultsTable(path).read_frame()
    except GenebError:
        raise
    except Exception as e:  # pyarrow raises several types for a non-parquet file
        raise GenebError(f"{str(path)!r} is not a readable parquet results table: {e}") from e


def _is_regime(value: str) -> bool:
    return value == "full" or (value.isdigit() and int(value) > 0)


def regime_order(regimes: Iterable[str]) -> list[str]:
    """Regimes from fewest shots to full data: ``['1', '10', 'full']``."""
    uniq = set(regimes)
    shots = sorted((r for r in uniq if r != "full"), key=int)
    return shots + (["full"] if "full" in uniq else [])


def c_values(df: pd.DataFrame) -> list[float]:
    """Distinct regularisation strengths of the linear rows, ascending."""
    cs = df.loc[df["probe"] == "linear", "C"].dropna().unique()
    return sorted(float(c) for c in cs)


def choose_main_c(df: pd.DataFrame, Cs: Sequence[float] | None = None) -> float | None:
    """The C of the headline analyses: 1 (the GENEB default) when present, else the first given.

    Without ``Cs``, a table without C = 1 uses the C with most linear rows (ties: the one closest
    to 1 on a log scale). None when the table has no linear rows.
    """
    present = c_values(df)
    if not present:
        return None
    if Cs:
        return 1.0 if any(math.isclose(c, 1.0) for c in Cs) else float(Cs[0])
    if any(math.isclose(c, 1.0) for c in present):
        return 1.0
    lin = df[df["probe"] == "linear"]
    counts = lin.groupby("C").size()
    best = max(counts.index, key=lambda c: (counts[c], -abs(math.log10(c)) if c > 0 else -1e9))
    return float(best)


def choose_standardize(df: pd.DataFrame) -> bool:
    """Features as stored (False, the GENEB default) when present, else True."""
    return False if (~df["standardize"]).any() else True


def restrict(
    df: pd.DataFrame,
    *,
    regimes: Sequence[str] | None = None,
    Cs: Sequence[float] | None = None,
) -> pd.DataFrame:
    """Keep the asked regimes and Cs (MLP rows, which have no C, are kept). Unknown: error."""
    out = df
    if regimes:
        present = set(df["regime"])
        for r in regimes:
            if r not in present:
                raise unknown_name("regime", str(r), present)
        out = out[out["regime"].isin(list(regimes))]
    if Cs:
        present_c = c_values(df)
        keep = []
        for c in Cs:
            match = [p for p in present_c if math.isclose(p, float(c), rel_tol=1e-9)]
            if not match:
                raise unknown_name("C", _fmt_c(float(c)), [_fmt_c(p) for p in present_c])
            keep.extend(match)
        is_lin = out["probe"] == "linear"
        out = out[~is_lin | out["C"].isin(keep)]
    return out.reset_index(drop=True)


def _fmt_c(c: float) -> str:
    return f"{c:g}"


def common_tasks(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Keep the tasks present for every model in ``df``; return the kept table and dropped tasks.

    Macro averages over different task sets are not comparable, so headline numbers use the
    tasks that every model was probed on.
    """
    n_models = df["model"].nunique()
    per_task = df.groupby("task")["model"].nunique()
    dropped = sorted(per_task[per_task < n_models].index.astype(str))
    return df[~df["task"].isin(dropped)].reset_index(drop=True), dropped


def select(
    df: pd.DataFrame,
    *,
    probe: str | None = None,
    C: float | None = None,
    regime: str | None = None,
    standardize: bool | None = None,
) -> pd.DataFrame:
    """Rows (of the results table or a derived table) matching the given context values."""
    mask = pd.Series(True, index=df.index)
    if probe is not None:
        mask &= df["probe"] == probe
    if C is not None:
        mask &= np.isclose(df["C"].astype(float), C, rtol=1e-9, atol=0) & df["C"].notna()
    if regime is not None:
        mask &= df["regime"] == regime
    if standardize is not None:
        mask &= df["standardize"] == standardize
    return df[mask].reset_index(drop=True)
