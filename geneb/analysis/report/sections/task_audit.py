"""Task health: each task's audit (leaks, shortcuts, verdict) and models against shortcuts.

The report never audits: it reads the audit records ``geneb tasks audit`` wrote (the audit
cache, ``$GENEB_CACHE/audit``, or the folder given as ``audits``), matched to the results by
task name and train-split fingerprint, so a record of other data is never used. Two parts:

- :func:`shortcut_gap`, shown in the leaderboard: per task and per category, each model's MCC
  beside its MCC minus the best shortcut baseline's MCC (same regime, same probe protocol);
- :func:`task_audit`, its own section: the verdicts, the counts, and the tasks where no model
  beats the best shortcut by ``SHORTCUT_MARGIN``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from geneb.analysis.report.context import ReportContext
from geneb.analysis.report.page import Page, regime_label
from geneb.analysis.table import select
from geneb.audit.cache import audit_dir, find_audits
from geneb.audit.verdict import SHORTCUT_MARGIN

AUDIT_COLUMNS: tuple[str, ...] = (
    "verdict", "n_test", "exact_duplicates_across_splits", "label_conflicts_across_splits",
    "revcomp_duplicates_across_splits", "near_duplicates_across_splits",
    "composition_twin_opposite_label_fraction",
)


def audits(ctx: ReportContext) -> dict[str, dict[str, Any]]:
    """The audit record of every task of the report that has one (read once per report)."""
    if "_audits" not in ctx.extra:
        data = ctx.data
        if "task_fingerprint" in data.columns:
            pairs = data[["task", "task_fingerprint"]].drop_duplicates()
            wanted = [(t, fp if isinstance(fp, str) else "")
                      for t, fp in pairs.itertuples(index=False)]
        else:
            wanted = [(t, "") for t in data["task"].unique()]
        ctx.extra["_audits"] = find_audits(wanted, ctx.extra.get("audit_dir"))
    audits: dict[str, dict[str, Any]] = ctx.extra["_audits"]
    return audits


def best_shortcut(rec: dict[str, Any], regime: str) -> tuple[str, float] | None:
    """(name, MCC) of the best shortcut of an audit in ``regime`` (None if not audited)."""
    scores = rec.get("shortcut_mcc_by_regime", {}).get(regime)
    if not scores:
        return None
    name = max(scores, key=lambda k: scores[k])
    return name, float(scores[name])


def gap_tables(ctx: ReportContext) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per model x task, per model x category) MCC, best shortcut MCC and their difference,
    headline probe and regime; tasks without an audit are left out of both."""
    recs = audits(ctx)
    perf = select(ctx.perf_main, regime=ctx.main_regime)
    rows = []
    for r in perf.itertuples(index=False):
        best = best_shortcut(recs[r.task], ctx.main_regime) if r.task in recs else None
        if best is None:
            continue
        rows.append({"model": r.model, "task": r.task, "category": r.category,
                     "mcc": r.mcc_mean, "best_shortcut": best[0], "shortcut_mcc": best[1],
                     "mcc_minus_shortcut": r.mcc_mean - best[1]})
    per_task = pd.DataFrame(rows, columns=["model", "task", "category", "mcc", "best_shortcut",
                                           "shortcut_mcc", "mcc_minus_shortcut"])
    per_cat = (
        per_task.groupby(["model", "category"], as_index=False)
        .agg(n_tasks=("task", "nunique"), mcc=("mcc", "mean"),
             shortcut_mcc=("shortcut_mcc", "mean"), mcc_minus_shortcut=("mcc_minus_shortcut",
                                                                        "mean"))
    )
    return per_task, per_cat


def shortcut_gap(page: Page, ctx: ReportContext) -> None:
    """The leaderboard's MCC-minus-shortcut tables (or a sentence saying why there are none)."""
    per_task, per_cat = gap_tables(ctx)
    label = regime_label(ctx.main_regime)
    if per_task.empty:
        where = ctx.extra.get("audit_dir") or audit_dir()
        page.p(
            f"MCC minus the best shortcut baseline: the audits in {where} have no shortcut "
            f"scores for the {label} regime (audits score regimes 1, 10 and full)."
            if audits(ctx) else
            f"MCC minus the best shortcut baseline: no task of this table has an audit "
            f"(looked in {where}); run `geneb tasks audit TASK...` on the tasks, then rebuild "
            "the report."
        )
        return
    page.table("shortcut_gap_category", per_cat,
               f"Per category, {label}: mean MCC beside mean MCC minus the best shortcut "
               "baseline's MCC (tasks with an audit)")
    page.table("shortcut_gap_task", per_task,
               f"Per task, {label}: MCC beside MCC minus the best shortcut baseline's MCC "
               "(length, GC, 1/2/3-mer composition, probed like the models)")


def task_audit(page: Page, ctx: ReportContext) -> None:
    """Verdicts and counts per task; tasks no model beats a shortcut on by the margin."""
    page.h(2, "Task health: leaks and shortcuts")
    recs = audits(ctx)
    tasks = sorted(ctx.data["task"].unique())
    missing = [t for t in tasks if t not in recs]
    if not recs:
        page.p(f"No task of this table has an audit (looked in "
               f"{ctx.extra.get('audit_dir') or audit_dir()}): run `geneb tasks audit TASK...`.")
        return
    table = pd.DataFrame(
        [{"task": t, **{c: recs[t].get(c) for c in AUDIT_COLUMNS},
          "best_shortcut": recs[t].get("best_shortcut"),
          "best_shortcut_mcc": recs[t].get("best_shortcut_mcc"),
          "reasons": "; ".join(recs[t].get("reasons", []))} for t in tasks if t in recs]
    )
    page.table("task_audit", table, "Task audit (test rows against train; rule: docs/tasks.md)")
    if missing:
        page.p(f"Not audited ({len(missing)}): {', '.join(missing)}.")
    per_task, _ = gap_tables(ctx)
    if per_task.empty:
        return
    best = per_task.groupby("task")["mcc_minus_shortcut"].max()
    flagged = sorted(best[best < SHORTCUT_MARGIN].index)
    page.p(
        f"Flagged: tasks where no model beats the best shortcut baseline by {SHORTCUT_MARGIN} "
        f"MCC ({regime_label(ctx.main_regime)}): "
        + (", ".join(f"{t} (best margin {best[t]:+.3f})" for t in flagged) if flagged
           else "none")
        + ". A number on a flagged task says little about the model."
    )
