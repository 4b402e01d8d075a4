"""Does size buy accuracy? Spearman between log(parameter count) and macro-MCC.

Models without a parameter count (k-mer baselines) are left out: they have no size to scale.
Sizes are the published parameter counts of the model catalogue where it has one for the
model (matched by store key: catalogue short name, alias or hub id; the facts are handed in by
the report command, never read from the installed catalogue here), because that is the size
papers compare; otherwise the count measured on the loaded backbone (store provenance, which
keeps the measured count either way). :func:`use_published_params` says which was used.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from scipy import stats

from geneb.analysis.properties import Catalogue, resolve_properties
from geneb.analysis.table import CONTEXT


def use_published_params(
    agg: pd.DataFrame, meta: pd.DataFrame, props: pd.DataFrame | None = None,
    catalogue: Catalogue | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Replace measured counts by published (or user-given) ones where known.

    ``props`` is :func:`geneb.analysis.properties.resolve_properties` output (user file, then
    catalogue, then measured); None resolves from ``catalogue`` (facts handed in by the
    caller, :data:`geneb.analysis.properties.Catalogue`) and the measured counts.
    Returns ``agg`` with ``n_params`` replaced, ``meta`` with ``n_params`` (used),
    ``n_params_measured`` and ``n_params_source`` columns, and one sentence for the report.
    """
    if props is None:
        measured = {
            m: n for m, n in zip(meta["model"], meta["n_params"], strict=True) if pd.notna(n)
        }
        props = resolve_properties(list(meta["model"]), None, measured, catalogue)
    used = dict(zip(props["model"], props["n_params"], strict=True))
    source = dict(zip(props["model"], props["n_params_source"], strict=True))
    source = {m: s if isinstance(s, str) else None for m, s in source.items()}
    meta = meta.assign(
        n_params_measured=meta["n_params"],
        n_params=meta["model"].map(used).astype(float),
        n_params_source=meta["model"].map(source),
    )
    agg = agg.assign(n_params=agg["model"].map(used).astype(float))
    pub = sorted(m for m, s in source.items() if isinstance(s, str) and s.startswith("published"))
    mea = sorted(m for m, s in source.items() if isinstance(s, str) and s.startswith("measured"))
    usr = sorted(m for m, s in source.items() if isinstance(s, str) and m not in pub + mea)
    note = "Parameter counts used for scaling: " + "; ".join(
        part
        for part in (
            f"published (model card or paper, geneb model catalogue) for {', '.join(pub)}"
            if pub
            else "",
            f"measured on the loaded backbone (store provenance) for {', '.join(mea)}"
            if mea
            else "",
            f"from the --model-properties file for {', '.join(usr)}" if usr else "",
        )
        if part
    ) + ("." if pub or mea or usr else "none.")
    return agg, meta, note


def _sized(agg: pd.DataFrame, exclude: Iterable[str]) -> pd.DataFrame:
    excl = set(exclude)
    keep = agg["n_params"].notna() & (agg["n_params"] > 0) & ~agg["model"].isin(excl)
    return agg[keep]


#: Columns of :func:`smaller_beats_larger`.
PAIR_COLUMNS: list[str] = [*CONTEXT, "scope", "smaller_model", "larger_model", "n_params_smaller",
                           "n_params_larger", "size_ratio", "macro_mcc_smaller",
                           "macro_mcc_larger"]  # fmt: skip
#: The pairs per (context, scope) a report lists: every count is over all pairs, but the
#: pair tables hold only the largest margins (all pairs grow with the square of the models).
TOP_PAIRS = 25


def scaling_correlation(
    agg: pd.DataFrame, *, exclude: Iterable[str] = (), factor: float = 5.0
) -> pd.DataFrame:
    """Spearman rho and p between log10(n_params) and macro-MCC per (context, scope).

    ``exclude`` names models to leave out (e.g. an outlier). Also counts the pairs with a size
    ratio of at least ``factor`` and those where the smaller model has a higher macro-MCC
    (see :func:`smaller_beats_larger`).
    """
    sized = _sized(agg, exclude)
    rows = []
    for key, g in sized.groupby([*CONTEXT, "scope"], dropna=False, sort=True):
        n = len(g)
        if n >= 3 and g["n_params"].nunique() > 1:
            rho, p = stats.spearmanr(np.log10(g["n_params"].astype(float)), g["macro_mcc"])
        else:
            rho = p = np.nan
        comparable, wins = _pair_masks(g, factor)
        rows.append((*key, n, float(rho), float(p), int(comparable.sum()), int(wins.sum())))
    return pd.DataFrame(
        rows,
        columns=[
            *CONTEXT,
            "scope",
            "n_models",
            "spearman_rho",
            "spearman_p",
            "n_pairs_size_ratio",
            "n_smaller_better",
        ],
    )


def _pair_masks(g: pd.DataFrame, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """(comparable, smaller wins) as (small, large) boolean matrices over ``g``'s rows."""
    n = g["n_params"].to_numpy(dtype=float)
    m = g["macro_mcc"].to_numpy(dtype=float)
    comparable = n[None, :] >= factor * n[:, None]
    return comparable, comparable & (m[:, None] > m[None, :])


def smaller_beats_larger(
    agg: pd.DataFrame, *, exclude: Iterable[str] = (), factor: float = 5.0,
    top: int | None = None,
) -> pd.DataFrame:
    """Every pair where the smaller model (n_params ≤ larger / ``factor``) has higher macro-MCC.

    ``top``: per (context, scope) only the ``top`` pairs with the largest margin (smaller's
    macro-MCC minus larger's; then the largest size ratio); None: every pair. The counts are
    :func:`scaling_correlation`'s ``n_smaller_better``.
    """
    sized = _sized(agg, exclude)
    parts = []
    for key, g in sized.groupby([*CONTEXT, "scope"], dropna=False, sort=True):
        _, wins = _pair_masks(g, factor)
        i, j = np.nonzero(wins)
        names = g["model"].to_numpy()
        n = g["n_params"].to_numpy(dtype=float)
        m = g["macro_mcc"].to_numpy(dtype=float)
        part = pd.DataFrame({"smaller_model": names[i], "larger_model": names[j],
                             "n_params_smaller": n[i].astype(np.int64),
                             "n_params_larger": n[j].astype(np.int64), "size_ratio": n[j] / n[i],
                             "macro_mcc_smaller": m[i], "macro_mcc_larger": m[j]})  # fmt: skip
        if top is not None:
            margin = part["macro_mcc_smaller"] - part["macro_mcc_larger"]
            order = np.lexsort((-part["size_ratio"].to_numpy(), -margin.to_numpy()))[:top]
            part = part.iloc[np.sort(order)]
        for col, val in zip([*CONTEXT, "scope"], key, strict=True):
            part.insert(len(part.columns) - 7, col, val)
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    return pd.concat(parts, ignore_index=True)[PAIR_COLUMNS]
