"""Capacity tiers: macro-MCC and few-shot degradation by parameter-count band, as in GENEB.

A tier is a band of parameter counts cut at ``edges`` (default 200M and 1B, GENEB's "< 200M,
200M-1B, > 1B"). Each band includes its upper edge: tier 0 holds n <= edges[0], tier i holds
edges[i-1] < n <= edges[i], the last holds n > edges[-1] (so a 1B model is in 200M-1B, as
"above 1B" in the paper excludes it). Models without a parameter count are in no tier.

- tier score: the mean over the tier's models of the overall macro-MCC (headline probe);
- gain between two tiers: the difference of their tier scores, with a percentile bootstrap
  interval that resamples models with replacement within each tier (seeded; reproducible);
- few-shot degradation per tier: the mean over the tier's models of the relative drop
  ``(full - k-shot) / full`` of :func:`geneb.analysis.fewshot.fewshot_degradation`.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np
import pandas as pd

from geneb.analysis.aggregates import OVERALL
from geneb.analysis.fewshot import fewshot_degradation
from geneb.errors import GenebError
from geneb.protocol import BOOT_SEED
from geneb.vocabulary import CAPACITY_TIER_EDGES, N_BOOT_REPORT, format_param_count


def tier_labels(edges: Sequence[float]) -> list[str]:
    """``['<=200M', '200M-1B', '>1B']`` for the default edges."""
    e = [format_param_count(x) for x in edges]
    return [f"<={e[0]}", *(f"{a}-{b}" for a, b in zip(e, e[1:], strict=False)), f">{e[-1]}"]


def check_edges(edges: Sequence[float]) -> tuple[float, ...]:
    """Tier edges: one or more positive numbers, strictly increasing."""
    out = tuple(float(x) for x in edges)
    increasing = all(b > a for a, b in zip(out, out[1:], strict=False))
    if not out or any(x <= 0 for x in out) or not increasing:
        raise GenebError(f"tier_edges: expected increasing values, all positive, got "
                         f"{list(edges)}", param="tier_edges")
    return out


def assign_tiers(n_params: pd.Series, edges: Sequence[float]) -> pd.Series:
    """The tier label of each count (None where the count is missing)."""
    labels = tier_labels(edges)
    return n_params.map(
        lambda n: None if pd.isna(n) else labels[bisect.bisect_left(list(edges), float(n))]
    )


def _overall(agg_main: pd.DataFrame, props: pd.DataFrame, edges: Sequence[float]) -> pd.DataFrame:
    ov = agg_main[agg_main["scope"] == OVERALL][["model", "regime", "macro_mcc"]]
    tiers = dict(zip(props["model"], assign_tiers(props["n_params"], edges), strict=True))
    ov = ov.assign(tier=ov["model"].map(tiers))
    return ov[ov["tier"].notna()]


def tier_scores(
    agg_main: pd.DataFrame, props: pd.DataFrame, edges: Sequence[float] = CAPACITY_TIER_EDGES
) -> pd.DataFrame:
    """Per regime and tier: n_models, the models, mean overall macro-MCC."""
    ov = _overall(agg_main, props, edges)
    order = {t: i for i, t in enumerate(tier_labels(edges))}
    rows = [
        (reg, tier, len(g), ", ".join(sorted(g["model"])), float(g["macro_mcc"].mean()))
        for (reg, tier), g in ov.groupby(["regime", "tier"], sort=True)
    ]
    out = pd.DataFrame(rows, columns=["regime", "tier", "n_models", "models", "mean_macro_mcc"])
    out["_o"] = out["tier"].map(order)
    return out.sort_values(["regime", "_o"]).drop(columns="_o").reset_index(drop=True)


def tier_gains(
    agg_main: pd.DataFrame,
    props: pd.DataFrame,
    edges: Sequence[float] = CAPACITY_TIER_EDGES,
    *,
    n_boot: int = N_BOOT_REPORT,
    seed: int = BOOT_SEED,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Per regime, for every two tiers (lower, higher): gain = score(higher) - score(lower),
    with a bootstrap interval over models resampled within each tier."""
    ov = _overall(agg_main, props, edges)
    labels = tier_labels(edges)
    rows = []
    for reg, g in ov.groupby("regime", sort=True):
        vals = {t: gt["macro_mcc"].to_numpy(dtype=float) for t, gt in g.groupby("tier")}
        present = [t for t in labels if t in vals]
        for i, lo in enumerate(present):
            for hi in present[i + 1 :]:
                rng = np.random.default_rng(seed)
                a, b = vals[lo], vals[hi]
                boot = b[rng.integers(0, len(b), (n_boot, len(b)))].mean(axis=1) - a[
                    rng.integers(0, len(a), (n_boot, len(a)))
                ].mean(axis=1)
                q = np.quantile(boot, [alpha / 2, 1 - alpha / 2])
                gain = float(b.mean() - a.mean())
                rows.append((reg, lo, hi, len(a), len(b), gain, float(q[0]), float(q[1])))
    cols = ["regime", "tier_low", "tier_high", "n_low", "n_high", "gain", "ci_low", "ci_high"]
    return pd.DataFrame(rows, columns=cols)


def tier_fewshot(
    agg_main: pd.DataFrame, props: pd.DataFrame, edges: Sequence[float] = CAPACITY_TIER_EDGES
) -> pd.DataFrame:
    """Per few-shot regime and tier: n_models and the mean relative drop from full data."""
    deg = fewshot_degradation(agg_main)
    tiers = dict(zip(props["model"], assign_tiers(props["n_params"], edges), strict=True))
    deg = deg.assign(tier=deg["model"].map(tiers)).dropna(subset=["tier", "drop_rel"])
    order = {t: i for i, t in enumerate(tier_labels(edges))}
    rows = [
        (reg, tier, len(g), float(g["drop_rel"].mean()), float(g["drop_abs"].mean()))
        for (reg, tier), g in deg.groupby(["regime", "tier"], sort=True)
    ]
    out = pd.DataFrame(
        rows, columns=["regime", "tier", "n_models", "mean_drop_rel", "mean_drop_abs"]
    )
    out["_o"] = out["tier"].map(order)
    return out.sort_values(["regime", "_o"]).drop(columns="_o").reset_index(drop=True)
