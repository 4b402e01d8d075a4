"""The variant-effect section of the report: metrics table, ROC curves, CSV tables.

``vep_section(summary, out)`` takes the plain-data summary of the per-variant score tables of
``geneb vep score`` (``geneb.vep.summary.summarise``: this module never imports geneb.vep, the
report reads vep outputs as data only), writes ``tables/vep_metrics.csv`` (AUROC / AUPRC /
Spearman with bootstrap CIs per task, model, scorer, window), ``tables/vep_status.csv`` (why
variants were not scored) and one ROC figure per task under ``figures/``, and returns the HTML
fragment and the files. It is self-contained (its own small HTML), so the main report can
append it as a section.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from geneb.analysis.report.page import CSS, html_table  # the report's look: tables fit
from geneb.store.keys import safe_name

SHOW = ["task", "model", "scorer", "window", "orientation", "n_scored", "n_not_scored",
        "n_left_out", "n_pos"]
#: Metrics shown as one "value [low, high]" cell each (the CSV keeps the three columns): 18
#: columns did not fit a 1280 px page.
METRICS = ("auroc", "auprc", "spearman", "pearson", "r2")


def for_page(metrics: pd.DataFrame) -> pd.DataFrame:
    """The page view of the metrics table: counts, then each metric with its interval."""
    out = metrics[[c for c in SHOW if c in metrics]].copy()
    for k in METRICS:
        if k not in metrics:
            continue
        if f"{k}_lo" not in metrics:
            out[k] = [f"{v:.3f}" if np.isfinite(v) else "" for v in metrics[k]]
            continue
        out[f"{k} [95% CI]"] = [
            "" if not np.isfinite(v) else f"{v:.3f}" if not np.isfinite(lo) else
            f"{v:.3f} [{lo:.3f}, {hi:.3f}]"
            for v, lo, hi in zip(metrics[k], metrics[f"{k}_lo"], metrics[f"{k}_hi"], strict=True)
        ]
    return out


SUPERVISED_NOTE = (
    "<p>Scorers <code>probe-diff</code> (features alt - ref) and <code>probe-concat</code> "
    "([ref, alt, alt - ref]) are supervised: a logistic-regression probe on the same window "
    "embeddings, scored by its out-of-fold probability of label 1 under cross-validation over "
    "contiguous genomic blocks (no two folds share a window; C chosen inside each training "
    "set). The other scorers are zero-shot.</p>")


def roc_figure(curves: list[tuple[str, Any, Any]], task: str, path: Path) -> Path:
    """ROC curves of every (model, scorer, window) on one task, AUROC in the legend."""
    fig = Figure(figsize=(5.5, 5.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for label, fpr, tpr in curves:
        ax.plot(fpr, tpr, lw=1.2, label=label)
    ax.plot([0, 1], [0, 1], ls="--", lw=0.8, color="grey")
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title(f"{task}: ROC (label 1 = positive)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="lower right")
    else:
        ax.text(0.5, 0.5, "no curve: scored variants of one class only", ha="center")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, format="png")
    return path


def vep_section(summary: dict[str, Any], out: str | Path) -> tuple[str, list[Path]]:
    """Write the section's tables and figures under ``out``; return (HTML fragment, files)."""
    out = Path(out)
    (out / "tables").mkdir(parents=True, exist_ok=True)
    metrics, notes, n_boot, seed = (summary[k] for k in ("metrics", "notes", "n_boot",
                                                         "boot_seed"))
    supervised = summary["supervised"]
    files: list[Path] = []
    mpath = out / "tables" / "vep_metrics.csv"
    metrics.to_csv(mpath, index=False)
    files.append(mpath)
    spath = out / "tables" / "vep_status.csv"
    summary["status"].to_csv(spath, index=False)
    files.append(spath)
    parts = [
        "<h2>Variant effects (zero-shot)</h2>" if not supervised else
        "<h2>Variant effects (zero-shot and supervised)</h2>",
        "<p>Each variant is scored from a reference window and the same window carrying the "
        "allele: embedding distances (cosine, l2; higher = predicted label 1) or the "
        "log-likelihood ratio of a language-model head (llr; negated, so lower likelihood of "
        f"the allele = predicted label 1). Intervals: 95% percentile bootstrap over variants "
        f"({n_boot} resamples, seed {seed}). Spearman: oriented score against the task's "
        "continuous score column, when it has one.</p>",
        *(f'<p class="warning">{html.escape(n)}</p>' for n in notes),
        *([SUPERVISED_NOTE] if supervised else []),
        f'<div class="scroll">{html_table(for_page(metrics))}</div>',
        "<p class=\"note\">(tables/vep_metrics.csv; variants not scored and why: "
        "tables/vep_status.csv)</p>",
    ]
    for task, curves in summary["curves"].items():
        fpath = roc_figure(curves, task, out / "figures" / f"vep_roc_{safe_name(task)}.png")
        files.append(fpath)
        data = base64.b64encode(fpath.read_bytes()).decode("ascii")
        alt = html.escape(f"ROC curves on {task}")
        parts.append(f'<figure><img alt="{alt}" src="data:image/png;base64,{data}">'
                     f"<figcaption>{alt}</figcaption></figure>")
    return "\n".join(parts), files


def vep_page(summary: dict[str, Any], out: str | Path) -> tuple[str, list[Path]]:
    """The section as a standalone offline page ``vep_report.html`` (``geneb vep evaluate``)."""
    out = Path(out)
    frag, files = vep_section(summary, out)
    page = ('<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>geneb variant effects</title><style>{CSS}</style></head><body>\n"
            f"{frag}\n</body></html>\n")
    path = out / "vep_report.html"
    path.write_text(page)
    return page, [*files, path]


def add_to_report(index: Path, summary: dict[str, Any]) -> None:
    """Append the variant-effect section to a built report page (before ``</body>``)."""
    frag, _ = vep_section(summary, index.parent)
    page = index.read_text(encoding="utf-8")
    cut = page.rfind("</body>")
    index.write_text(page[:cut] + frag + "\n" + page[cut:] if cut >= 0 else page + frag,
                     encoding="utf-8")
