"""Build the GENEB report: every analysis as CSV tables, PNG figures and one offline HTML page.

Which cells feed which analysis (also written into the report's method statement):

- headline (leaderboard, categories, rankings, scaling, difficulty, uncertainty): linear probe,
  the main C (1 when present), features as stored unless the table only has standardised
  fits, every regime separately, with ``full`` shown first;
- few-shot degradation: the same cells, compared across regimes;
- regularisation sensitivity: the linear probe at every C of the sweep, per regime;
- probe stability: linear (main C) against MLP on the same (regime, model, task, seed).

Analyses the table cannot support (one model, no MLP rows, one C, no parameter counts) are
replaced by a sentence saying why.
"""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from geneb.analysis import figures
from geneb.analysis.aggregates import aggregate_scores, macro_micro_agreement
from geneb.analysis.difficulty import task_difficulty
from geneb.analysis.fewshot import fewshot_degradation, regime_means
from geneb.analysis.metadata import (
    GROUP_COLUMNS,
    metadata_groups,
    model_metadata,
    read_model_info,
)
from geneb.analysis.performance import performance_matrix
from geneb.analysis.rankings import (
    category_leaders,
    category_rank_correlations,
    leader_changes,
    model_rankings,
)
from geneb.analysis.regularization import (
    c_rank_agreement,
    c_sensitivity_summary,
    macro_by_c,
    mcc_range_over_c,
)
from geneb.analysis.scaling import (
    scaling_correlation,
    smaller_beats_larger,
    use_published_params,
)
from geneb.analysis.stability import paired_probe_scores, per_task_probe_agreement, probe_stability
from geneb.analysis.table import (
    choose_main_c,
    choose_standardize,
    common_tasks,
    load_results,
    regime_order,
    restrict,
    select,
)
from geneb.analysis.uncertainty import (
    BOOT_SEED,
    N_BOOT,
    adjacent_model_tests,
    bootstrap_over_seeds,
    bootstrap_over_tasks,
)
from geneb.errors import GenebError

#: Rows of a table shown in the HTML page; the CSV always has all of them.
HTML_MAX_ROWS = 60

_CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ccc;margin-top:2em}
h3{font-size:1.05em}
table{border-collapse:collapse;font-size:.82em;margin:.6em 0}
th,td{border:1px solid #ddd;padding:2px 6px;text-align:right}th{background:#f3f3f3}
td:first-child,th:first-child{text-align:left}
.note{color:#555;font-style:italic}.left-out{background:#fff7e0;padding:.4em .7em}
img{max-width:100%;height:auto;border:1px solid #eee}
"""


@dataclass
class _Page:
    """Accumulates HTML sections, CSV tables and PNG figures of one report."""

    out: Path
    parts: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)

    def h(self, level: int, text: str) -> None:
        self.parts.append(f"<h{level}>{html.escape(text)}</h{level}>")

    def p(self, text: str, cls: str = "") -> None:
        c = f' class="{cls}"' if cls else ""
        self.parts.append(f"<p{c}>{html.escape(text)}</p>")

    def left_out(self, text: str) -> None:
        self.p(f"Left out: {text}", "left-out")

    def ul(self, items: Iterable[str]) -> None:
        lis = "".join(f"<li>{html.escape(i)}</li>" for i in items)
        self.parts.append(f"<ul>{lis}</ul>")

    def table(self, name: str, df: pd.DataFrame, caption: str, show: bool = True) -> None:
        """Write ``tables/<name>.csv``; show it (first rows) in the page when ``show``."""
        path = self.out / "tables" / f"{name}.csv"
        df.to_csv(path, index=False)
        self.tables.append(name)
        if not show:
            self.p(f"{caption}: tables/{name}.csv ({len(df)} rows).", "note")
            return
        shown = _for_display(df.head(HTML_MAX_ROWS))
        more = (
            f" First {HTML_MAX_ROWS} of {len(df)} rows; all in tables/{name}.csv."
            if len(df) > HTML_MAX_ROWS
            else f" (tables/{name}.csv)"
        )
        self.parts.append(f"<h3>{html.escape(caption)}</h3>")
        self.parts.append(
            shown.to_html(
                index=False, float_format=lambda v: f"{v:.3f}", na_rep="", border=0, escape=True
            )
        )
        self.p(more.strip(), "note")

    def figure(self, path: Path, alt: str) -> None:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        self.figures.append(path.name)
        self.parts.append(
            f'<figure><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'
            f"<figcaption>{html.escape(alt)}</figcaption></figure>"
        )

    def html(self, title: str) -> str:
        body = "\n".join(self.parts)
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>"
            f"<body>\n{body}\n</body></html>\n"
        )


def _for_display(df: pd.DataFrame) -> pd.DataFrame:
    """Page view of a table: counts as integers, constant probe/C columns dropped (see Method)."""
    out = df.copy()
    for col in out.columns:
        if col.startswith("n_params") and pd.api.types.is_numeric_dtype(out[col]):
            out[col] = out[col].round().astype("Int64")
    if len(out) > 1:
        const = [c for c in ("probe", "standardize", "C") if c in out and out[c].nunique() <= 1]
        out = out.drop(columns=const)
    return out


def _fmt_c(c: float | None) -> str:
    return "-" if c is None or (isinstance(c, float) and np.isnan(c)) else f"{c:g}"


def _regime_label(r: str) -> str:
    return "full data" if r == "full" else f"{r}-shot"


def _uniq(s: pd.Series) -> list[str]:
    return sorted({str(v) for v in s.dropna() if str(v) != ""})


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
) -> Path:
    """Write ``out_dir/index.html``, ``out_dir/tables/*.csv`` and ``out_dir/figures/*.png``.

    ``regimes`` and ``Cs`` restrict the table (unknown values are an error); the headline C is
    1 when present, else the first of ``Cs``. Returns the path of ``index.html``.
    """
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

    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise GenebError(f"report output {str(out)!r} exists and is not a folder")
    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    for old in [*(out / "tables").glob("*.csv"), *(out / "figures").glob("*.png")]:
        old.unlink()  # a rerun must not leave tables or figures of a previous report behind
    page = _Page(out)

    std = choose_standardize(df)
    df_std = df[df["standardize"] == std].reset_index(drop=True)
    n_other_std = len(df) - len(df_std)
    main_c = choose_main_c(df_std, Cs)
    data, dropped_tasks = common_tasks(df_std)
    regs = regime_order(data["regime"])
    main_regime = "full" if "full" in regs else regs[-1]
    models = sorted(data["model"].unique())
    categories = sorted(data["category"].unique())

    page.h(1, "GENEB report")
    _method(
        page,
        df_all,
        data,
        std=std,
        n_other_std=n_other_std,
        main_c=main_c,
        dropped_tasks=dropped_tasks,
        regs=regs,
        n_boot=n_boot,
        boot_seed=boot_seed,
    )

    perf = performance_matrix(data)
    agg = aggregate_scores(perf)
    meta = model_metadata(data, info)
    agg, meta, params_note = use_published_params(agg, meta)  # catalogue counts where known
    ranks = model_rankings(agg)
    has_linear = main_c is not None
    if has_linear:
        main_sel = dict(probe="linear", C=main_c, standardize=std)
    else:  # only MLP rows: headline from the MLP probe
        main_sel = dict(probe="mlp", standardize=std)
        page.p("The table has no linear-probe rows: headline analyses use the MLP probe.")
    agg_main = select(agg, **main_sel)
    perf_main = select(perf, **main_sel)

    # ---------------------------------------------------------------- leaderboard
    page.h(2, "Leaderboard")
    boot_t = bootstrap_over_tasks(perf_main, n_boot=n_boot, seed=boot_seed)
    boot_s = bootstrap_over_seeds(select(data, **main_sel), n_boot=n_boot, seed=boot_seed)
    for regime in [main_regime] + [r for r in regs if r != main_regime]:
        lb = select(ranks, regime=regime)
        lb = select(lb, **main_sel)
        lb = lb[lb["scope"] == "overall"][
            ["rank", "model", "n_params", "n_tasks", "macro_mcc", "micro_mcc"]
        ]
        bt = select(boot_t, regime=regime)[
            ["model", "ci_low", "ci_high", "rank_ci_low", "rank_ci_high"]
        ]
        bs = select(boot_s, regime=regime)[["model", "ci_low", "ci_high"]].rename(
            columns={"ci_low": "seed_ci_low", "ci_high": "seed_ci_high"}
        )
        lb = lb.merge(bt, on="model", how="left").merge(bs, on="model", how="left")
        page.table(
            f"leaderboard_{regime}",
            lb,
            f"Overall macro-MCC, {_regime_label(regime)} (CIs: {n_boot} bootstrap "
            "resamples over tasks; seed_ci over seeds)",
        )
    page.p(
        "macro-MCC is the unweighted mean over tasks of the per-task MCC (mean over seeds); "
        "micro-MCC weights each task by its test-set size. Ranks: 1 = best, ties share the "
        "best rank."
    )

    # ---------------------------------------------------------------- per category
    page.h(2, "Per-category performance")
    main_agg = select(agg_main, regime=main_regime)
    wide = main_agg.pivot(index="model", columns="scope", values="macro_mcc")
    order = wide["overall"].sort_values(ascending=False).index
    wide = wide.loc[order, ["overall"] + [c for c in categories if c in wide.columns]]
    page.figure(
        figures.heatmap(
            wide,
            out / "figures" / "heatmap_model_category.png",
            f"macro-MCC per category, {_regime_label(main_regime)}",
        ),
        f"Model x category macro-MCC ({_regime_label(main_regime)}, headline probe)",
    )
    page.table(
        "performance_matrix",
        perf,
        "Performance matrix: mean and sd of MCC over seeds per cell",
        show=False,
    )
    page.table("aggregates", agg, "Macro and micro MCC per context, scope and model", show=False)
    page.table(
        "macro_micro_agreement",
        macro_micro_agreement(agg),
        "Agreement of macro and micro rankings",
        show=False,
    )
    mm = select(macro_micro_agreement(agg_main), regime=main_regime)
    page.table(
        "macro_micro_agreement_headline",
        mm,
        f"Macro vs micro ranking agreement, {_regime_label(main_regime)}",
    )

    # ---------------------------------------------------------------- rankings
    page.h(2, "Rankings and their instability")
    page.table("rankings", ranks, "Rank of every model per context and scope", show=False)
    if len(models) < 2:
        page.left_out(
            f"rankings, leaders, rank correlations and rank changes need at least two "
            f"models; the results have one ({models[0]})."
        )
    else:
        leaders = category_leaders(agg)
        page.table("category_leaders", leaders, "Leader per context and scope", show=False)
        lead_main = select(leaders, **main_sel)
        page.table(
            "category_leaders_headline",
            lead_main[["regime", "scope", "leader", "leader_macro_mcc", "runner_up", "margin"]],
            "Leader per category and regime (headline probe)",
        )
        if len(regs) >= 2:
            changes = leader_changes(leaders)
            page.table("leader_changes", changes, "All leader changes between regimes", show=False)
            page.table(
                "leader_changes_headline",
                select(changes, **main_sel),
                "Categories whose leader changes between regimes (headline probe)",
            )
        else:
            page.left_out(
                "leader changes between regimes need at least two regimes; the "
                f"results have one ({regs[0]})."
            )
        corr = category_rank_correlations(agg)
        page.table(
            "category_rank_correlations",
            corr,
            "Spearman/Kendall between the rankings of every pair of scopes",
            show=False,
        )
        if len(models) < 3:
            page.p(
                "Rank correlations between categories need at least three models; they "
                "are NaN here.",
                "note",
            )
        if len(categories) >= 2:
            rk = select(ranks, regime=main_regime, **main_sel)
            bump = rk.pivot(index="model", columns="scope", values="rank")
            bump = bump[["overall"] + [c for c in categories if c in bump.columns]]
            page.figure(
                figures.rank_changes(
                    bump,
                    out / "figures" / "rank_changes.png",
                    f"model rank per category, {_regime_label(main_regime)}",
                ),
                "Rank of each model per category (1 = best)",
            )
            cm = select(corr, regime=main_regime, **main_sel)
            cm = cm[cm["scope_a"] != "overall"]
            if cm["spearman_rho"].notna().any():
                page.p(
                    f"Between categories ({_regime_label(main_regime)}), Spearman between "
                    f"rankings: median {cm['spearman_rho'].median():.2f}, minimum "
                    f"{cm['spearman_rho'].min():.2f} over {len(cm)} category pairs."
                )
        else:
            page.left_out(
                "rank changes across categories need at least two categories; the "
                f"results have one ({categories[0]})."
            )

    # ---------------------------------------------------------------- metadata / scaling
    page.h(2, "Model size and metadata")
    page.table(
        "model_metadata",
        meta,
        "Models: parameter count (published where the catalogue has it, else measured)"
        + (" and model-info columns" if info is not None else ""),
    )
    page.p(params_note)
    unsized = sorted(meta.loc[meta["n_params"].isna(), "model"])
    if unsized:
        page.p(
            "Without a parameter count (k-mer baselines or unknown), left out of the scaling "
            f"analysis: {', '.join(unsized)}."
        )
    sized = [m for m in meta.loc[meta["n_params"].notna(), "model"] if m not in scaling_exclude]
    if scaling_exclude:
        page.p(f"Excluded from scaling by request: {', '.join(scaling_exclude)}.")
    if len(sized) < 3:
        page.left_out(
            f"the scaling analysis needs at least three models with a parameter count; "
            f"the results have {len(sized)}."
        )
    else:
        sc = scaling_correlation(agg, exclude=scaling_exclude)
        pairs = smaller_beats_larger(agg, exclude=scaling_exclude)
        page.table("scaling_correlation", sc, "Scaling per context and scope", show=False)
        page.table(
            "smaller_beats_larger",
            pairs,
            "Pairs where a model at least 5x smaller has higher macro-MCC",
            show=False,
        )
        head = select(sc, regime=main_regime, **main_sel)
        page.table(
            "scaling_headline",
            head,
            f"Spearman between log10(parameters) and macro-MCC, {_regime_label(main_regime)}",
        )
        ov = head[head["scope"] == "overall"].iloc[0]
        ph = select(pairs, regime=main_regime, **main_sel)
        ph = ph[ph["scope"] == "overall"]
        page.p(
            f"Overall: rho = {ov['spearman_rho']:.2f} (p = {ov['spearman_p']:.3g}, "
            f"{int(ov['n_models'])} models); in {len(ph)} of {int(ov['n_pairs_size_ratio'])} "
            "pairs with a size ratio of at least 5 the smaller model scores higher."
        )
        if len(ph):
            page.table(
                "smaller_beats_larger_headline",
                ph[
                    [
                        "smaller_model",
                        "larger_model",
                        "size_ratio",
                        "macro_mcc_smaller",
                        "macro_mcc_larger",
                    ]
                ],
                "Smaller model ahead (overall, headline probe)",
            )
        pts = select(agg_main, regime=main_regime)
        pts = pts[(pts["scope"] == "overall") & pts["model"].isin(sized)]
        page.figure(
            figures.scaling_scatter(
                pts,
                out / "figures" / "scaling.png",
                f"{_regime_label(main_regime)}: Spearman rho = {ov['spearman_rho']:.2f} "
                f"(p = {ov['spearman_p']:.3g})",
            ),
            "macro-MCC against parameter count",
        )
    group_cols = [c for c in GROUP_COLUMNS if info is not None and c in meta.columns]
    if info is None:
        page.p(
            "No --model-info file was given: no matched comparisons by architecture, "
            "tokenization or pretraining data.",
            "note",
        )
    elif not group_cols:
        page.left_out(
            "the model-info file has none of the columns "
            f"{', '.join(GROUP_COLUMNS)}, so there are no matched comparisons."
        )
    else:
        ov = select(agg_main, regime=main_regime)
        ov = ov[ov["scope"] == "overall"]
        groups = metadata_groups(ov, meta, group_cols)
        if groups.empty:
            page.left_out(
                "no value of "
                + ", ".join(group_cols)
                + " is shared by two models, so there is nothing to match."
            )
        else:
            page.table(
                "metadata_groups",
                groups,
                "Matched comparisons: models ranked within groups sharing a property "
                f"({_regime_label(main_regime)}, overall macro-MCC)",
            )

    # ---------------------------------------------------------------- few-shot
    page.h(2, "Few-shot degradation")
    shot_regs = [r for r in regs if r != "full"]
    if "full" not in regs or not shot_regs:
        page.left_out(
            "few-shot degradation needs the full regime and at least one k-shot "
            f"regime; the results have {', '.join(regs)}."
        )
    else:
        rm = regime_means(agg)
        deg = fewshot_degradation(agg)
        page.table("regime_means", rm, "Mean macro-MCC over models per regime", show=False)
        page.table("fewshot_degradation", deg, "Few-shot degradation", show=False)
        page.table(
            "regime_means_headline",
            select(rm, **main_sel),
            "Mean macro-MCC over models per regime (headline probe)",
        )
        page.table(
            "fewshot_degradation_headline",
            select(deg, **main_sel)[
                ["model", "regime", "macro_mcc", "full_macro_mcc", "drop_abs", "drop_rel"]
            ],
            "Drop from full data per model (relative = absolute / full)",
        )
        page.figure(
            figures.fewshot_lines(
                agg_main[agg_main["scope"] == "overall"],
                regs,
                out / "figures" / "fewshot.png",
                "macro-MCC by regime",
            ),
            "Few-shot degradation: macro-MCC per regime and model",
        )

    # ---------------------------------------------------------------- difficulty
    page.h(2, "Task difficulty")
    diff = task_difficulty(perf)
    page.table("task_difficulty", diff, "Task difficulty per context", show=False)
    dm = select(diff, regime=main_regime, **main_sel)
    page.table(
        "task_difficulty_headline",
        dm[["task", "category", "n_models", "mean_mcc", "sd_mcc", "difficulty", "high_variance"]],
        f"Task difficulty, {_regime_label(main_regime)}: easy = mean MCC over models "
        "> 0.70, hard < 0.35, high variance = sd over models > 0.12",
    )

    # ---------------------------------------------------------------- probe stability
    page.h(2, "Probe stability: linear vs MLP")
    paired = paired_probe_scores(data, C=main_c, standardize=std) if has_linear else pd.DataFrame()
    if not has_linear:
        page.left_out(
            "the results have no linear-probe rows, so there is nothing to compare "
            "the MLP probe with."
        )
    elif (data["probe"] == "mlp").sum() == 0:
        page.left_out(
            "the results have no MLP-probe rows (run geneb probe --probe mlp), so "
            "linear and MLP rankings cannot be compared."
        )
    elif paired.empty:
        page.left_out(
            "no (regime, model, task, seed) has both a linear fit at "
            f"C = {_fmt_c(main_c)} and an MLP fit, so the probes cannot be compared."
        )
    else:
        stab = probe_stability(paired)
        page.table(
            "probe_paired_scores", paired, "Linear and MLP MCC per model-task pair", show=False
        )
        page.table(
            "probe_per_task_agreement",
            per_task_probe_agreement(paired),
            "Per-task Spearman between linear and MLP",
            show=False,
        )
        page.table("probe_stability", stab, "Linear vs MLP agreement per regime")
        if len(models) < 3:
            page.p("With fewer than three models the Spearman statistics are NaN.", "note")
        pr = "full" if "full" in set(paired["regime"]) else regime_order(paired["regime"])[-1]
        page.figure(
            figures.probe_scatter(
                paired[paired["regime"] == pr],
                out / "figures" / "linear_vs_mlp.png",
                f"{_regime_label(pr)}, linear C = {_fmt_c(main_c)}",
            ),
            "MLP against linear probe MCC per model-task pair",
        )

    # ---------------------------------------------------------------- regularisation
    page.h(2, "Regularisation sensitivity")
    by_c = macro_by_c(agg)
    by_c = by_c[by_c["standardize"] == std]
    n_c = by_c["C"].nunique()
    if not has_linear:
        page.left_out("the results have no linear-probe rows, so there is no C sweep.")
    elif n_c < 2:
        page.left_out(
            "the results have a single C "
            f"({_fmt_c(main_c)}), so sensitivity to C cannot be measured (run geneb "
            "probe --C 0.01 0.1 1 10 100)."
        )
    else:
        agree = c_rank_agreement(by_c)
        page.table("c_macro_mcc", by_c, "Macro-MCC per model and C", show=False)
        page.table(
            "c_rank_agreement", agree, "Spearman between rankings at each pair of C", show=False
        )
        page.table(
            "c_sensitivity",
            c_sensitivity_summary(agree),
            "Pairwise Spearman of model rankings across C, per regime",
        )
        page.table("c_mcc_range", mcc_range_over_c(by_c), "Per-model macro-MCC range over C")
        if len(models) < 3:
            page.p("With fewer than three models the Spearman statistics are NaN.", "note")
        page.figure(
            figures.c_curves(
                by_c, regs, out / "figures" / "mcc_vs_c.png", "linear probe: macro-MCC against C"
            ),
            "macro-MCC against C per regime",
        )

    # ---------------------------------------------------------------- uncertainty
    page.h(2, "Uncertainty")
    page.table(
        "bootstrap_tasks", boot_t, "Bootstrap over tasks: macro-MCC and rank CIs", show=False
    )
    page.table(
        "bootstrap_seeds", boot_s, "Bootstrap over seeds: macro-MCC and rank CIs", show=False
    )
    page.p(
        f"Intervals are 95% percentile intervals from {n_boot} bootstrap resamples "
        f"(numpy default_rng({boot_seed})). Over tasks: tasks drawn with replacement, the "
        "same draw for every model. Over seeds: seeds drawn with replacement, the same draw "
        "for every model and task; full-data fits do not depend on the seed, so their seed "
        "intervals have zero width."
    )
    if len(models) < 2:
        page.left_out("paired tests between adjacent models need at least two models.")
    else:
        tests = adjacent_model_tests(perf_main, alpha=alpha)
        page.table(
            "adjacent_tests",
            tests,
            f"Wilcoxon signed-rank over tasks between adjacent models (Holm, alpha = {alpha:g})",
        )
        for regime in regs:
            t = tests[tests["regime"] == regime]
            if t.empty:
                continue
            sep = [
                f"{a} > {b}"
                for a, b, s in zip(t["model"], t["next_model"], t["separable"], strict=True)
                if s
            ]
            not_sep = [
                f"{a} vs {b}"
                for a, b, s in zip(t["model"], t["next_model"], t["separable"], strict=True)
                if not s
            ]
            n_t = int(t["n_tasks"].iloc[0])
            msg = (
                f"{_regime_label(regime)}: separable adjacent ranks: "
                f"{'; '.join(sep) if sep else 'none'}; not separable: "
                f"{'; '.join(not_sep) if not_sep else 'none'}."
            )
            if 2.0 / 2**n_t >= alpha:
                msg += (
                    f" With {n_t} tasks the smallest possible two-sided Wilcoxon p is "
                    f"{2.0 / 2**n_t:.3g}, so no pair can be separated at {alpha:g}."
                )
            page.p(msg)

    # ---------------------------------------------------------------- fit health
    bad = data[~data["converged"]]
    page.h(2, "Fits that did not converge")
    if bad.empty:
        page.p("Every fit in the table converged.")
    else:
        cols = [
            c
            for c in ("model", "task", "regime", "seed", "C", "probe", "n_iter")
            if c in bad.columns
        ]
        page.table(
            "nonconverged",
            bad[cols],
            f"{len(bad)} fits did not converge (kept in every analysis, not hidden)",
        )

    page.p(
        f"Tables ({len(page.tables)}): " + ", ".join(f"tables/{t}.csv" for t in page.tables) + ".",
        "note",
    )
    index = out / "index.html"
    index.write_text(page.html("GENEB report"), encoding="utf-8")
    return index


def _method(
    page: _Page,
    df_all: pd.DataFrame,
    data: pd.DataFrame,
    *,
    std: bool,
    n_other_std: int,
    main_c: float | None,
    dropped_tasks: list[str],
    regs: list[str],
    n_boot: int,
    boot_seed: int,
) -> None:
    """The method statement: protocol, seeds, solver, tolerance and versions, from the table."""
    from geneb.probe.schema import MAX_ITER

    try:
        from geneb.probe.solvers.base import DEFAULT_TOL

        tol = f"{DEFAULT_TOL:g}"
    except ImportError:  # pragma: no cover - the solver interface ships with geneb
        tol = "unknown"
    page.h(2, "Method")
    seeds = sorted(int(s) for s in data["seed"].dropna().unique())
    cs = sorted(data.loc[data["probe"] == "linear", "C"].dropna().unique())
    items = [
        f"{len(df_all)} fits in the table; {len(data)} used: "
        f"{data['model'].nunique()} models, {data['task'].nunique()} tasks in "
        f"{data['category'].nunique()} categories.",
        "Regimes: "
        + ", ".join(_regime_label(r) for r in regs)
        + "; k-shot regimes draw k train rows per class per seed, the same rows for every "
        "model; the test split is always whole.",
        f"Seeds: {', '.join(map(str, seeds))}.",
        "Probes: " + ", ".join(_uniq(data["probe"])) + "; linear = L2 logistic regression "
        f"with C in {', '.join(_fmt_c(c) for c in cs) or '-'}, headline C = {_fmt_c(main_c)}; "
        f"max_iter {MAX_ITER}, gradient tolerance {tol} (the engine default; not recorded "
        "per row). Backends: " + (", ".join(_uniq(data["backend"])) or "not recorded") + ".",
        f"Features {'standardised on the probe train rows' if std else 'as stored'}"
        + (f"; {n_other_std} fits with the other setting are not used." if n_other_std else "."),
        f"Convergence: {int(data['converged'].sum())} of {len(data)} fits converged; "
        f"largest n_iter {_max_iter_seen(data)}.",
        "Headline analyses (leaderboard, categories, rankings, scaling, difficulty, uncertainty): "
        "linear probe at the headline C, per regime. Few-shot: the same cells across regimes. "
        "Regularisation: every C. Probe stability: linear at the headline C against the MLP, "
        "paired on (regime, model, task, seed).",
        "Scores: per task, the mean MCC over seeds; macro-MCC = unweighted mean over tasks; "
        "micro-MCC = mean weighted by test-set size.",
        f"Uncertainty: {n_boot} bootstrap resamples, numpy default_rng({boot_seed}), 95% "
        "percentile intervals; Wilcoxon signed-rank tests over tasks between adjacent models, "
        "Holm-corrected.",
        "Versions: geneb "
        + (", ".join(_uniq(data["geneb_version"])) or "not recorded")
        + "; scikit-learn "
        + (", ".join(_uniq(data["sklearn_version"])) or "not recorded")
        + ". Fits created "
        + _created_range(data)
        + ".",
    ]
    if "task_synthetic" in data and data["task_synthetic"].fillna(False).astype(bool).any():
        syn = sorted(data.loc[data["task_synthetic"].fillna(False).astype(bool), "task"].unique())
        items.insert(
            0,
            f"SYNTHETIC DATA: {len(syn)} of {data['task'].nunique()} tasks are generated by "
            f"geneb's synthetic starter suite, not real biological data ({', '.join(syn)}).",
        )
    if dropped_tasks:
        items.append(
            "Tasks not probed for every model, left out so that averages compare like "
            f"with like: {', '.join(dropped_tasks)}."
        )
    page.ul(items)


def _created_range(data: pd.DataFrame) -> str:
    c = _uniq(data["created"])
    return f"{c[0]} to {c[-1]}" if c else "(not recorded)"


def _max_iter_seen(data: pd.DataFrame) -> str:
    return str(int(np.nanmax(data["n_iter"]))) if data["n_iter"].notna().any() else "-"
