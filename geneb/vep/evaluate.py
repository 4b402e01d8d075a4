"""Metrics of variant scores: AUROC, AUPRC, Spearman, with bootstrap intervals over variants.

Scores are first oriented so that higher means "label 1" (``ORIENTATION``: distances as they
are, LLR negated); the orientation is a column of the result. Only rows with status ``ok``
count; how many did not is reported (``n_not_scored``). AUROC is the Mann-Whitney statistic
with ties averaged (= ``sklearn.metrics.roc_auc_score``); AUPRC is average precision (=
``sklearn.metrics.average_precision_score``). With the task's continuous ``task_score`` column
(e.g. a measured function score), ``spearman`` is the rank correlation of the oriented score
with it (for BRCA1, where low function scores are loss of function, a useful scorer gives a
negative value). For ``ridge-*`` scorers (``geneb vep probe --target score``: out-of-fold
predictions of ``task_score``) also ``pearson`` and ``r2`` of the prediction against it.
Intervals: percentile bootstrap over variants (``n_boot`` resamples drawn
with ``numpy.random.default_rng(seed)``; resamples with one class only are left out).

Tables of one task that cover different variants (one model scored with ``--limit 200``,
another on all 3,893) are compared on the variants they have in common
(:func:`common_variants`): every metric and ROC curve of a task then describes the same
variants, and ``n_left_out`` says how many of a table's variants that left out. Comparing a
200-variant AUROC with a 3,893-variant one would mix two different benchmarks.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from geneb.constraints import N_BOOT_RULE, SEED, validate_params
from geneb.probe.metrics import _binary_auroc
from geneb.probe.regression_metrics import pearson, r2
from geneb.protocol import BOOT_SEED, CI_LEVEL, N_BOOT_METRIC
from geneb.vep.scorers import ORIENTATION

GROUP = ["task", "model", "scorer", "window"]


def auroc(labels: np.ndarray, scores: np.ndarray) -> float:
    """AUROC of ``scores`` for ``labels == 1`` (NaN with one class)."""
    y = np.asarray(labels) == 1
    if y.all() or not y.any():
        return float("nan")
    return float(_binary_auroc(y, np.asarray(scores, dtype=np.float64)))


def auprc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Average precision: sum over thresholds of (recall step) x precision (sklearn's rule)."""
    y = np.asarray(labels) == 1
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == len(y):
        return float("nan")
    s = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-s, kind="mergesort")
    ys, ss = y[order], s[order]
    last = np.flatnonzero(np.concatenate((ss[1:] != ss[:-1], [True])))  # end of each tie run
    tp = np.cumsum(ys)[last]
    precision = tp / (last + 1)
    recall = tp / n_pos
    return float(np.sum(np.diff(np.concatenate(([0.0], recall))) * precision))


def roc_points(labels: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(false positive rate, true positive rate) at every distinct threshold, from (0, 0)."""
    y = np.asarray(labels) == 1
    s = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-s, kind="mergesort")
    ys, ss = y[order], s[order]
    last = np.flatnonzero(np.concatenate((ss[1:] != ss[:-1], [True])))
    tp = np.cumsum(ys)[last]
    fp = (last + 1) - tp
    return (np.concatenate(([0.0], fp / max(1, (~y).sum()))),
            np.concatenate(([0.0], tp / max(1, y.sum()))))


def common_variants(scores: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """Per task, only the rows of variants that every (model, scorer, window) has a row for;
    and one line per task where the variant sets differed, naming the sets and what is left
    out. Rows are kept in their order; the column ``n_left_out`` counts, per row's group,
    the variants it had outside the common set."""
    scores = scores.copy()
    scores["n_left_out"] = 0
    keep = np.ones(len(scores), dtype=bool)
    notes = []
    for task, t in scores.groupby("task", sort=True):
        sets = {k: set(g["variant"]) for k, g in t.groupby(GROUP[1:], sort=True)}
        common = set.intersection(*sets.values())
        if all(len(v) == len(common) for v in sets.values()):
            continue
        inside = t["variant"].isin(common).to_numpy()
        keep[scores.index.get_indexer(t.index)] = inside
        for k, g in t.groupby(GROUP[1:], sort=True):
            scores.loc[g.index, "n_left_out"] = len(sets[k]) - len(common)
        sizes = ", ".join(f"{m} {s} w{w}: {len(v):,}" for (m, s, w), v in sets.items())
        notes.append(
            f"task {task}: the score tables cover different variants ({sizes}); every model "
            f"is compared on the {len(common):,} variants common to all "
            f"({int((~inside).sum()):,} rows left out). Score every model on the same "
            "variants (the same limit) to compare on all of them."
        )
    return scores[keep], notes


def oriented(df: pd.DataFrame) -> np.ndarray:
    """Scores turned so that higher means label 1 (per row, from its scorer)."""
    sign = df["scorer"].map(ORIENTATION).to_numpy(dtype=np.float64)
    turned: np.ndarray = df["score"].to_numpy(dtype=np.float64) * sign
    return turned


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    return spearman_why(a, b)[0]


def spearman_why(a: np.ndarray, b: np.ndarray) -> tuple[float, str]:
    """(Spearman of ``a`` with ``b`` over the rows where both are finite, why it is NaN or
    ""): a constant input has no ranks to correlate (checked here, so scipy's
    ConstantInputWarning never reaches the user)."""
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3:
        return float("nan"), f"fewer than 3 variants with a score and a task_score ({ok.sum()})"
    if np.ptp(a[ok]) == 0:
        return float("nan"), "the score is the same for every variant"
    if np.ptp(b[ok]) == 0:
        return float("nan"), "task_score is the same for every variant"
    return float(stats.spearmanr(a[ok], b[ok]).statistic), ""


def _skipped(obs: dict[str, float], y: np.ndarray, why_spearman: str) -> str:
    """Why each NaN metric of a row is NaN ("metric: reason; ..."), or ""."""
    classes = sorted(set(y.tolist()))
    one = ("no variant was scored" if not classes else
           f"the scored variants all have label {classes[0]}")
    why = {"auroc": one, "auprc": one, "spearman": why_spearman}
    return "; ".join(f"{k}: {why.get(k, 'not computable')}" for k, v in obs.items()
                     if not np.isfinite(v))


#: ``evaluate``'s parameters: the one bootstrap rule (at least 100 resamples, as the report).
EVALUATE_PARAMS = {"n_boot": N_BOOT_RULE, "boot_seed": SEED}


@validate_params(EVALUATE_PARAMS)
def evaluate(
    scores: pd.DataFrame, *, n_boot: int = N_BOOT_METRIC, boot_seed: int = BOOT_SEED,
    level: float = CI_LEVEL,
) -> pd.DataFrame:
    """One row per (task, model, scorer, window): counts, metrics and their CIs (``n_boot``
    resamples, at least 100, as every bootstrap of geneb), on the variants common to every
    table of the task (:func:`common_variants`)."""
    scores, _ = common_variants(scores)
    rows = []
    for key, g in scores.groupby(GROUP, sort=True):
        ok = g[g["status"] == "ok"]
        y = ok["label"].to_numpy()
        s = oriented(ok)
        ts = ok["task_score"].to_numpy(dtype=np.float64) if "task_score" in ok else None
        obs = {"auroc": auroc(y, s), "auprc": auprc(y, s)}
        why_spearman = ""
        if ts is not None:
            obs["spearman"], why_spearman = spearman_why(s, ts)
        # a ridge scorer's scores are predictions of task_score
        fit_ts = ts if ts is not None and str(key[2]).startswith("ridge-") else None
        raw = ok["score"].to_numpy(np.float64)
        if fit_ts is not None:
            obs.update(pearson=pearson(raw, fit_ts), r2=r2(fit_ts, raw))
        rng = np.random.default_rng(boot_seed)
        boot: dict[str, list[float]] = {k: [] for k in obs}
        if len(ok):
            for idx in rng.integers(0, len(ok), (n_boot, len(ok))):
                yb, sb = y[idx], s[idx]
                boot["auroc"].append(auroc(yb, sb))
                boot["auprc"].append(auprc(yb, sb))
                if ts is not None:
                    boot["spearman"].append(_spearman(sb, ts[idx]))
                if fit_ts is not None:
                    boot["pearson"].append(pearson(raw[idx], fit_ts[idx]))
                    boot["r2"].append(r2(fit_ts[idx], raw[idx]))
        row = dict(zip(GROUP, key, strict=True))
        row.update({
            "orientation": str(g["orientation"].iloc[0]), "n": len(g), "n_scored": len(ok),
            "n_not_scored": len(g) - len(ok),
            "n_left_out": int(g["n_left_out"].iloc[0]), "n_pos": int((y == 1).sum()),
            "n_neg": int((y == 0).sum()), "positive_rate": float((y == 1).mean()) if len(y)
            else float("nan"),
        })
        a = (1 - level) / 2
        for k, v in obs.items():
            b = np.asarray(boot[k], dtype=np.float64)
            b = b[np.isfinite(b)]
            row[k] = v
            row[f"{k}_lo"], row[f"{k}_hi"] = (
                (float(np.percentile(b, 100 * a)), float(np.percentile(b, 100 * (1 - a))))
                if len(b) else (float("nan"), float("nan"))
            )
        row["n_boot"] = n_boot
        row["skipped"] = _skipped(obs, y, why_spearman)
        rows.append(row)
    return pd.DataFrame(rows)
