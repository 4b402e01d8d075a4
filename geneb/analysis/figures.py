"""The report's figures, drawn on matplotlib's Agg canvas directly.

No pyplot and no global backend switch: figures need no display and leave no state behind.

Each function takes a tidy table produced by the analyses and writes one PNG; callers decide
whether the data supports the figure, so a figure is never empty.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

DPI = 100


#: Longest label drawn in a figure; longer names are cut (the tables keep them whole).
MAX_LABEL = 32


def _label(value: object) -> str:
    """A model/task/category name as literal text: matplotlib reads ``$...$`` as mathtext
    (and fails on an unbalanced ``$``), so dollars are escaped; very long names are cut so
    that the axes keep their room."""
    s = str(value)
    if len(s) > MAX_LABEL:
        s = s[: MAX_LABEL - 1] + "\u2026"
    return s.replace("$", r"\$")


#: Models a figure names one by one (legend entries, cell values, point labels): past it a
#: figure draws every model unnamed (a heatmap: the best ``MAX_NAMED`` rows) and its title
#: says so; the tables hold every model. 1,000 legend entries take minutes and say nothing.
MAX_NAMED = 40


def _legend(ax: Any, n_models: int, **kw: Any) -> None:
    if n_models <= MAX_NAMED:
        ax.legend(fontsize=7, **kw)


def _unnamed(title: str, n_models: int) -> str:
    return title if n_models <= MAX_NAMED else f"{title} ({n_models} models, unnamed)"


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    # bbox "tight": long tick labels widen the image instead of being cut off
    # no "Software" text chunk: the bytes do not depend on the matplotlib version
    fig.savefig(
        path, dpi=DPI, format="png", bbox_inches="tight", pad_inches=0.1,
        metadata={"Software": None},
    )
    return path


def _size(n_cols: int, n_rows: int, labels: Iterable[object] = ()) -> tuple[float, float]:
    """Figure size for a grid of cells; ``labels`` (drawn beside the axes) add their width."""
    extra = 0.07 * max((len(_label(x)) for x in labels), default=0)
    return (min(16.0, 3.0 + 0.7 * n_cols + extra), min(14.0, 2.0 + 0.4 * n_rows))


def heatmap(wide: pd.DataFrame, path: Path, title: str) -> Path:
    """Model x category heatmap of macro-MCC, values written in the cells (at most
    :data:`MAX_NAMED` rows: those with the highest mean, said in the title)."""
    if len(wide) > MAX_NAMED:
        best = wide.mean(axis=1).sort_values(ascending=False, kind="stable").index[:MAX_NAMED]
        title = f"{title} (the {MAX_NAMED} best of {len(wide)} models by mean)"
        wide = wide.loc[[i for i in wide.index if i in set(best)]]
    fig = Figure(figsize=_size(wide.shape[1], wide.shape[0], wide.index))
    ax = fig.add_subplot()
    vals = wide.to_numpy(dtype=float)
    im = ax.imshow(vals, cmap="viridis", aspect="auto", vmin=min(0.0, np.nanmin(vals)), vmax=1.0)
    ax.set_xticks(range(wide.shape[1]), [_label(c) for c in wide.columns], rotation=45, ha="right")
    ax.set_yticks(range(wide.shape[0]), [_label(i) for i in wide.index])
    for i in range(vals.shape[0]):
        for j in range(vals.shape[1]):
            if np.isfinite(vals[i, j]):
                ax.text(
                    j,
                    i,
                    f"{vals[i, j]:.2f}",
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if vals[i, j] < 0.5 else "black",
                )
    fig.colorbar(im, ax=ax, label="macro-MCC")
    ax.set_title(title, fontsize=9)
    return _save(fig, path)


def scaling_scatter(points: pd.DataFrame, path: Path, title: str) -> Path:
    """macro-MCC against parameter count (log axis), one labelled point per model."""
    fig = Figure(figsize=(6, 4.5))
    ax = fig.add_subplot()
    ax.scatter(points["n_params"], points["macro_mcc"])
    title = _unnamed(title, len(points))
    for _, r in points.iterrows() if len(points) <= MAX_NAMED else ():
        ax.annotate(
            _label(r["model"]),
            (r["n_params"], r["macro_mcc"]),
            fontsize=7,
            xytext=(3, 3),
            textcoords="offset points",
        )
    ax.set_xscale("log")
    ax.set_xlabel("parameters (log scale)")
    ax.set_ylabel("macro-MCC")
    ax.set_title(title, fontsize=9)
    return _save(fig, path)


def fewshot_lines(by_regime: pd.DataFrame, regimes: list[str], path: Path, title: str) -> Path:
    """macro-MCC per regime (x: fewest shots to full), one line per model."""
    fig = Figure(figsize=(6, 4.5))
    ax = fig.add_subplot()
    wide = by_regime.pivot(index="model", columns="regime", values="macro_mcc")
    wide = wide[[r for r in regimes if r in wide.columns]]
    x = np.arange(wide.shape[1])
    for model, row in wide.iterrows():
        ax.plot(x, row.to_numpy(dtype=float), marker="o", label=_label(model))
    ax.set_xticks(x, [f"{r}-shot" if r != "full" else "full" for r in wide.columns])
    ax.set_ylabel("macro-MCC")
    _legend(ax, len(wide), loc="best")
    ax.set_title(_unnamed(title, len(wide)), fontsize=9)
    return _save(fig, path)


def rank_changes(ranks: pd.DataFrame, path: Path, title: str) -> Path:
    """Bump chart: rank of each model (1 = best, top) in each scope (overall first)."""
    named = len(ranks) <= MAX_NAMED
    fig = Figure(figsize=_size(ranks.shape[1] + 2, ranks.shape[0] + 4,
                               ranks.index if named else ()))  # fmt: skip
    ax = fig.add_subplot()
    x = np.arange(ranks.shape[1])
    for model, row in ranks.iterrows():
        ax.plot(x, row.to_numpy(dtype=float), marker="o", label=_label(model))
    ax.set_xticks(x, [_label(c) for c in ranks.columns], rotation=45, ha="right")
    ax.invert_yaxis()
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel("rank (1 = best)")
    _legend(ax, len(ranks), loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.set_title(_unnamed(title, len(ranks)), fontsize=9)
    return _save(fig, path)


def probe_scatter(paired: pd.DataFrame, path: Path, title: str) -> Path:
    """MLP against linear MCC per model-task pair, with the diagonal."""
    fig = Figure(figsize=(5.5, 5))
    ax = fig.add_subplot()
    for model, g in paired.groupby("model", sort=True):
        ax.scatter(g["linear_mcc"], g["mlp_mcc"], s=18, label=_label(model))
    lo = float(min(paired["linear_mcc"].min(), paired["mlp_mcc"].min(), 0.0))
    ax.plot([lo, 1], [lo, 1], color="grey", lw=0.8, ls="--")
    ax.set_xlabel("linear probe MCC")
    ax.set_ylabel("MLP probe MCC")
    n_models = paired["model"].nunique()
    _legend(ax, n_models, loc="best")
    ax.set_title(_unnamed(title, n_models), fontsize=9)
    return _save(fig, path)


def c_curves(by_c: pd.DataFrame, regimes: list[str], path: Path, title: str) -> Path:
    """macro-MCC against C (log axis), one panel per regime, one line per model."""
    regs = [r for r in regimes if r in set(by_c["regime"])]
    fig = Figure(figsize=(4.2 * len(regs), 4))
    for i, regime in enumerate(regs):
        ax = fig.add_subplot(1, len(regs), i + 1)
        g = by_c[by_c["regime"] == regime]
        for model, m in g.groupby("model", sort=True):
            m = m.sort_values("C")
            ax.plot(m["C"], m["macro_mcc"], marker="o", label=_label(model))
        ax.set_xscale("log")
        ax.set_xlabel("C")
        ax.set_ylabel("macro-MCC")
        ax.set_title(f"{regime}-shot" if regime != "full" else "full data", fontsize=9)
        if i == 0:
            _legend(ax, by_c["model"].nunique(), loc="best")
    fig.suptitle(_unnamed(title, by_c["model"].nunique()), fontsize=9)
    return _save(fig, path)


def labelled_bars(
    labels: list[str],
    values: np.ndarray,
    path: Path,
    title: str,
    ylabel: str,
    errors: tuple[np.ndarray, np.ndarray] | None = None,
) -> Path:
    """One bar per label (e.g. a tier or a matched-pair contrast); ``errors`` = (low, high)
    interval ends drawn as error bars."""
    fig = Figure(figsize=_size(len(labels), 6, ()))
    ax = fig.add_subplot()
    yerr = None
    if errors is not None:
        yerr = np.vstack([values - errors[0], errors[1] - values])
    ax.bar(range(len(labels)), values, yerr=yerr, capsize=4)
    ax.set_xticks(range(len(labels)), [_label(x) for x in labels], rotation=30, ha="right")
    ax.axhline(0.0, color="black", linewidth=0.8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    return _save(fig, path)


def size_curves(series: dict[str, pd.DataFrame], path: Path, title: str) -> Path:
    """Mean MCC (+- sd over seeds) against subsample size, one line per (model, task)."""
    fig = Figure(figsize=(6.5, 4.5))
    ax = fig.add_subplot()
    for label, g in series.items():
        sd = g["sd_mcc"].fillna(0.0).to_numpy(dtype=float)
        ax.errorbar(g["size"], g["mean_mcc"], yerr=sd, marker="o", capsize=3, label=_label(label))
    ax.set_xscale("log")
    ax.set_xlabel("training rows (log scale)")
    ax.set_ylabel("MCC (mean over seeds)")
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    return _save(fig, path)
