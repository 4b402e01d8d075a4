"""A user's models placed among GENEB's published 41 (``geneb report --compare geneb``).

Only rows made by GENEB's protocol are compared with the published ones (GENEB's leaderboard
is the paper protocol: ``LogisticRegression(C=1, max_iter=1000)``, features as stored, the mean
over seeds 13, 17, 42, 123, 997): the user's ``protocol = paper`` rows of the linear probe at
C = 1. Converged-protocol rows, MLP rows, other Cs and tasks GENEB does not have are left out
(counted in ``excluded``), never mixed in. A user task is joined by GENEB task id, named either
by its catalogue name or by the id, and takes GENEB's OWN category (where geneb's catalogue
files a task elsewhere, GENEB's category applies, or macro-MCC would not be GENEB's).

Per regime, every model (the user's and the 41) is scored on the *common set*: the GENEB tasks
every user model has in that regime (named in ``common``). A category of which the common set
lacks tasks is flagged (``complete`` false, with the missing tasks in ``categories``): its mean
is over the tasks present for every model alike, never a silent average of what happens to be
there; the overall macro-MCC over an incomplete common set is flagged the same way. Ranks are
1 = best (ties share the best rank) among all models, with percentile intervals from
resampling the common tasks within categories (:func:`geneb.analysis.uncertainty.
bootstrap_over_tasks`, the same draw for every model). The published scores on the full set and
the published rank come along for reference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from geneb.analysis.aggregates import OVERALL, aggregate_scores
from geneb.analysis.metadata import COMPARE_COLUMNS
from geneb.analysis.performance import performance_matrix
from geneb.analysis.rankings import model_rankings
from geneb.analysis.uncertainty import bootstrap_over_tasks
from geneb.errors import GenebError
from geneb.protocol import BOOT_SEED, N_BOOT_REPORT
from geneb.results.geneb_tasks import catalogue_names, catalogue_to_geneb_id
from geneb.results.leaderboard_file import GENEB_CATEGORY_SLUGS, GENEB_REGIMES
from geneb.results.published import leaderboard, published_rows, source_label
from geneb.vocabulary import DEFAULT_SEEDS

#: The one comparison context: GENEB's probe, C and features as stored.
CONTEXT_VALUES: dict[str, Any] = {"probe": "linear", "C": 1.0, "standardize": False}
#: The sentence the report shows about what is compared (the comparability panel's first line).
PAPER_ONLY = ("Only paper-protocol rows (linear probe, C = 1) are compared with GENEB's "
              "published rows, which are the paper protocol; converged-protocol rows are never "
              "mixed in.")
USER_SUFFIX = " (yours)"


@dataclass
class Comparison:
    """The tables of the comparison (module docstring); every one is a CSV of the report."""

    source: str
    ranks: pd.DataFrame
    common: pd.DataFrame
    categories: pd.DataFrame
    comparability: pd.DataFrame
    excluded: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    user_models: list[str] = field(default_factory=list)


def _reasons(user: pd.DataFrame, geneb_ids: dict[str, str]) -> pd.Series:
    """Why each user row is not compared (None: it is), column-wise."""
    protocol = user["protocol"].astype(str)
    probe = user["probe"].astype(str)
    c = user["C"].astype(float)
    out = pd.Series([None] * len(user), index=user.index, dtype=object)
    checks = [
        (protocol != "paper", protocol + " protocol (GENEB's rows are the paper protocol)"),
        (probe != "linear", probe + " probe (GENEB: linear)"),
        (~np.isclose(c, 1.0, rtol=1e-9, atol=0), c.map(lambda x: f"C = {x:g} (GENEB: C = 1)")),
        (~user["task"].astype(str).isin(set(geneb_ids)),
         pd.Series("task not among GENEB's 100", index=user.index)),
    ]
    for bad, why in reversed(checks):  # the first reason that applies wins
        out = out.where(~bad, why)
    return out


def _select(user: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the compared rows, with ``geneb_id``; one row per (model, reason) left out)."""
    ids = catalogue_to_geneb_id()
    reasons = _reasons(user, ids)
    keep = user[reasons.isna()].copy()
    left = user[reasons.notna()].assign(reason=reasons[reasons.notna()])
    excluded = (left.groupby(["model", "reason"], sort=True).size().rename("n_rows")
                .reset_index())
    keep["geneb_id"] = keep["task"].astype(str).map(ids)
    # features as stored where a model has them (GENEB's); standardised only where it has not
    as_stored = keep.groupby("model")["standardize"].transform(lambda s: (~s).any())
    keep = keep[~keep["standardize"] | ~as_stored]
    return keep.reset_index(drop=True), excluded


def _user_perf(rows: pd.DataFrame, cat_of: dict[str, str]) -> pd.DataFrame:
    """Per (user model, regime, GENEB task): the mean over seeds, GENEB's category."""
    data = rows.assign(task=rows["geneb_id"], category=rows["geneb_id"].map(cat_of),
                       model=rows["model"].astype(str))
    for col, v in CONTEXT_VALUES.items():
        data[col] = v
    perf = performance_matrix(data)
    perf["source"] = "user"
    return perf


def _published_perf(source: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the published rows as a performance matrix, each model's published scores)."""
    board = leaderboard(source)
    rows = published_rows(board)
    perf = performance_matrix(rows)
    flags = rows.drop_duplicates("model").set_index("model")["official"]
    perf["source"] = "GENEB"  # a published model (the user's: "user")
    perf["official"] = perf["model"].map(flags)
    full = aggregate_scores(perf)
    full["published_rank"] = full.groupby(["regime", "scope"])["macro_mcc"].rank(
        ascending=False, method="min").astype(int)
    ref = full[["regime", "scope", "model", "macro_mcc", "published_rank"]].rename(
        columns={"macro_mcc": "published_macro_mcc"})
    return perf, ref


def compare_with_published(user: pd.DataFrame, source: str = "published:geneb", *,
                           n_boot: int = N_BOOT_REPORT, seed: int = BOOT_SEED,
                           info: pd.DataFrame | None = None) -> Comparison:
    """Place the user's models among the published ones (module docstring).

    Parameters
    ----------
    user : the user's validated results (:func:`geneb.analysis.table.load_results`).
    source : the published source (``published:geneb``).
    n_boot, seed : the task bootstrap of the rank intervals.
    info : the user's own columns of the model-properties file: its ``pooling``/``recipe``
        columns, when present, fill the comparability panel.

    Returns
    -------
    Comparison
    """
    board = leaderboard(source)
    cat_of = {t: GENEB_CATEGORY_SLUGS[c] for t, c in board.tasks}
    rows, excluded = _select(user)
    if rows.empty:
        raise GenebError(
            "compare: the results have no rows to compare with GENEB's published ones (paper "
            "protocol, linear probe, C = 1, on GENEB's tasks named by catalogue name or GENEB "
            "id); probe with protocol='paper'", param="compare")
    pub, ref = _published_perf(source)
    clash = set(rows["model"].astype(str)) & set(pub["model"])
    rows["model"] = rows["model"].astype(str).map(lambda m: m + USER_SUFFIX if m in clash else m)
    mine = _user_perf(rows, cat_of)
    users = sorted(mine["model"].unique())
    regimes = [GENEB_REGIMES[k] for k in board.records]
    parts = [_regime(r, mine, pub, ref, board.task_ids, cat_of, n_boot, seed)
             for r in regimes if r in set(mine["regime"])]
    if not parts:
        raise GenebError(f"compare: the user's regimes {sorted(set(mine['regime']))} are not "
                         f"among the published ones {regimes}", param="compare")
    ranks, common, cats = (pd.concat([p[i] for p in parts], ignore_index=True) for i in range(3))
    notes = [PAPER_ONLY]
    conv = excluded[excluded["reason"].str.contains("protocol")]
    if len(conv):
        notes.append(f"{int(conv['n_rows'].sum())} converged-protocol row(s) of "
                     f"{conv['model'].nunique()} model(s) left out.")
    if clash:
        notes.append(f"User model(s) named like a published one are shown with '{USER_SUFFIX}': "
                     f"{', '.join(sorted(clash))}.")
    panel = comparability(rows, mine, excluded, board.task_ids, info)
    return Comparison(source=source_label(board), ranks=ranks, common=common, categories=cats,
                      comparability=panel, excluded=excluded, notes=notes, user_models=users)


def _regime(regime: str, mine: pd.DataFrame, pub: pd.DataFrame, ref: pd.DataFrame,
            order: list[str], cat_of: dict[str, str], n_boot: int,
            seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(ranks, common-set table, category table) of one regime."""
    m = mine[mine["regime"] == regime]
    users = sorted(m["model"].unique())
    have = {u: set(m.loc[m["model"] == u, "task"]) for u in users}
    common = [t for t in order if all(t in have[u] for u in users)]
    names = catalogue_names()
    common_tab = pd.DataFrame({
        "regime": regime, "task": order, "task_name": [names.get(t) for t in order],
        "category": [cat_of[t] for t in order], "in_common": [t in set(common) for t in order],
        "n_user_models": [sum(t in have[u] for u in users) for t in order]})
    cats = _category_table(regime, order, set(common), cat_of)
    perf = pd.concat([m, pub[pub["regime"] == regime]], ignore_index=True)
    perf = perf[perf["task"].isin(common)].reset_index(drop=True)
    if perf.empty:
        return pd.DataFrame(), common_tab, cats
    ranks = model_rankings(aggregate_scores(perf))
    boots = [bootstrap_over_tasks(perf, n_boot=n_boot, seed=seed).assign(scope=OVERALL)]
    for c in perf["category"].unique():
        boots.append(bootstrap_over_tasks(perf[perf["category"] == c], n_boot=n_boot,
                                          seed=seed).assign(scope=c))
    boot = pd.concat(boots, ignore_index=True)[["scope", "model", "rank_ci_low", "rank_ci_high"]]
    ranks = ranks.merge(boot, on=["scope", "model"], how="left")
    ranks = ranks.merge(ref[ref["regime"] == regime].drop(columns="regime"),
                        on=["scope", "model"], how="left")
    complete = dict(zip(cats["category"], cats["complete"], strict=True))
    ranks["n_geneb_tasks"] = ranks["scope"].map(
        lambda s: len(order) if s == OVERALL else int(cats.set_index("category").at[
            s, "n_geneb"]))
    ranks["complete"] = ranks["scope"].map(
        lambda s: all(complete.values()) if s == OVERALL else bool(complete[s]))
    info = perf.drop_duplicates("model").set_index("model")
    ranks["source"] = ranks["model"].map(info["source"])
    ranks["official"] = ranks["model"].map(info["official"]) if "official" in info else None
    ranks["n_models"] = ranks.groupby("scope")["model"].transform("size")
    cols = ["regime", "scope", "model", "source", "official", "n_params", "n_tasks",
            "n_geneb_tasks", "complete", "macro_mcc", "micro_mcc", "rank", "rank_ci_low",
            "rank_ci_high", "n_models", "published_macro_mcc", "published_rank"]
    return ranks[cols], common_tab, cats


def _category_table(regime: str, order: list[str], common: set[str],
                    cat_of: dict[str, str]) -> pd.DataFrame:
    """Per GENEB category: its tasks, how many are in the common set, which are missing."""
    rows = []
    for c in dict.fromkeys(cat_of[t] for t in order):
        tasks = [t for t in order if cat_of[t] == c]
        missing = [t for t in tasks if t not in common]
        rows.append({"regime": regime, "category": c, "n_geneb": len(tasks),
                     "n_common": len(tasks) - len(missing), "complete": not missing,
                     "missing": "; ".join(missing)})
    return pd.DataFrame(rows)


def comparability(rows: pd.DataFrame, mine: pd.DataFrame, excluded: pd.DataFrame,
                  order: list[str], info: pd.DataFrame | None) -> pd.DataFrame:
    """Per user model: how its compared rows were made against how GENEB's were."""
    from geneb.tasks.catalogue import load_task_catalogue

    sizes = {e.name: e.sizes.get("test") for e in load_task_catalogue()}
    names = catalogue_names()
    out = []
    for model, g in rows.groupby("model", sort=True):
        left = excluded[excluded["model"] == model]
        out += [
            (model, "protocol", f"paper ({len(g)} rows compared); left out: " + (
                ", ".join(f"{r.n_rows} {r.reason}" for r in left.itertuples()) or "none"),
             "paper: LogisticRegression(C=1, max_iter=1000)"),
            (model, "C", "1", "1"),
            (model, "seeds", _seeds(g), "mean over " + ", ".join(map(str, DEFAULT_SEEDS))),
            (model, "standardisation", "standardised (StandardScaler)" if g["standardize"].all()
             else "features as stored", "features as stored"),
            (model, "pooling / recipe", _info(info, model), "per model in GENEB's code "
             "(not in the leaderboard)"),
        ]
        for regime, r in g.groupby("regime", sort=True):
            missing = [names.get(t, t) for t in order if t not in set(r["geneb_id"])]
            out.append((model, f"tasks ({regime})", f"{len(order) - len(missing)} of "
                        f"{len(order)}" + (f" ({len(missing)} missing: {', '.join(missing[:3])}"
                                           f"{', ...' if len(missing) > 3 else ''})"
                                           if missing else ""), f"{len(order)}"))
        out.append((model, "test split sizes", *_sizes(g, sizes, names)))
    return pd.DataFrame(out, columns=["model", "item", "user", "geneb"])


def _seeds(g: pd.DataFrame) -> str:
    parts = []
    for regime, r in g.groupby("regime", sort=True):
        seeds = sorted({int(s) for s in r["seed"].dropna()})
        short = "" if set(DEFAULT_SEEDS) <= set(seeds) else " (not GENEB's five)"
        parts.append(f"{regime}: {', '.join(map(str, seeds)) or '-'}{short}")
    return "; ".join(parts)


def _info(info: pd.DataFrame | None, model: str) -> str:
    if info is None or "model" not in info.columns:
        return "not recorded in the results (the model-properties columns pooling/recipe give it)"
    row = info[info["model"].astype(str) == model]
    cols = [c for c in COMPARE_COLUMNS if c in info.columns]
    if row.empty or not cols:
        return "not recorded in the model-properties file"
    return "; ".join(f"{c} {row.iloc[0][c]}" for c in cols)


def _sizes(g: pd.DataFrame, sizes: dict[str, int | None], names: dict[str, str]
           ) -> tuple[str, str]:
    """(the user's test sizes against the catalogue's published ones, what GENEB used)."""
    n_test = g.groupby("geneb_id")["n_test"].first()
    same, differ, unknown = 0, [], 0
    for tid, n in n_test.items():
        ref = sizes.get(names.get(str(tid), ""))
        if ref is None or pd.isna(n):
            unknown += 1
        elif int(n) == int(ref):
            same += 1
        else:
            differ.append(f"{names.get(str(tid), tid)} {int(n)} vs {ref}")
    text = f"{same} as published, {len(differ)} differ, {unknown} unknown"
    if differ:
        text += ": " + ", ".join(differ[:3]) + (" ..." if len(differ) > 3 else "")
    return text, "the source dataset's test split, where the task catalogue states its size"
