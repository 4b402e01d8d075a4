#!/usr/bin/env python3
"""Generate docs/geneb-recomputed.md: what geneb's report computes from GENEB's published matrix.

Usage: ``python tools/geneb_recomputed.py [--check] [OUT]`` (OUT defaults to
``docs/geneb-recomputed.md``). It builds the report twice from ``published:geneb`` (the package
copy of GENEB's leaderboard): once on all 41 records as published (what ``geneb report
--results published:geneb`` gives), once on the 40 official ones (the paper's set) for the
comparison with the paper, and writes the page from the reports' ``tables/*.csv`` only. Every
number of the page is in those tables. ``--check`` exits 1 when OUT differs from what would be
written (``tests/test_geneb_recomputed_doc.py`` runs the same comparison).

The paper's numbers (:data:`PAPER`) are held out: they are only printed beside geneb's values,
never fed into an analysis.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "docs" / "geneb-recomputed.md"
#: GENEB's "prokaryotic outlier" of the scaling analysis (the one model it leaves out)
OUTLIER = ("evo-1-131k-base",)
README = "GENEB README (github.com/darlednik/GENEB, Key findings and Leaderboard)"
SUMMARY = "summary of arXiv 2606.04525 (picx.dev/p/3kbvgf)"
PRIMER = "summary of arXiv 2606.04525 (paperglide.net, Paper Primer)"
#: (what, paper value, where the paper states it, key of geneb's value in ``_geneb_values``)
PAPER: tuple[tuple[str, str, str, str], ...] = (
    ("models / tasks / categories", "40 / 100 / 13", "abstract", "counts"),
    ("#1 macro-MCC, full (GENERator-eukaryote-3b)",
     "0.605", README, "macro:GENERator-eukaryote-3b-base"),
    ("#2 macro-MCC, full (LucaOne-default-step36M)",
     "0.589", README, "macro:LucaOne-default-step36M"),
    ("#3 macro-MCC, full (GENERator-eukaryote-1.2b)",
     "0.581", README, "macro:GENERator-eukaryote-1.2b-base"),
    ("#4 macro-MCC, full (GenomeOcean-4B)", "0.573", README, "macro:GenomeOcean-4B"),
    ("#5 macro-MCC, full (NT-2.5B-MS)",
     "0.573", README, "macro:nucleotide-transformer-2.5b-multi-species"),
    ("#6 macro-MCC, full (Omni-DNA-1B)", "0.568", README, "macro:Omni-DNA-1B"),
    ("#1 micro-MCC, full (GENERator-eukaryote-3b)",
     "0.598", README, "micro:GENERator-eukaryote-3b-base"),
    ("#6 micro-MCC, full (Omni-DNA-1B)", "0.560", README, "micro:Omni-DNA-1B"),
    ("top 6 by macro-MCC, full, in order",
     "GENERator-3b, LucaOne, GENERator-1.2b, GenomeOcean-4B, NT-2.5B-MS, Omni-DNA-1B",
     README, "top6"),
    ("GenomeOcean-4B, histone modification",
     "0.545 (best of the top 6)", README, "cat:GenomeOcean-4B:histone_modifications"),
    ("NT-2.5B-MS, splice sites",
     "0.652 (best of the top 6)", README,
     "cat:nucleotide-transformer-2.5b-multi-species:splice_sites"),
    ("promoters, range over the top 6", "0.739-0.774", README, "range:promoters"),
    ("DNA methylation, range over the top 6", "0.231-0.440", README, "range:dna_methylation"),
    ("Spearman rho, log params vs macro-MCC, full", "0.565 (p < 0.001)", SUMMARY, "rho:all"),
    ("the same without the prokaryotic outlier (Evo-1-131k)", "0.685", SUMMARY, "rho:without"),
    ("categories whose full-data leader is not the 10-shot leader",
     "8 of 13", SUMMARY, "reranks10"),
    ("low full-shot ceilings lose less (ceiling vs absolute drop)",
     "inverse pattern (no number)", SUMMARY, "ceiling"),
    ("in-domain models; pairs with a model >= 5x smaller ahead",
     "36 models; 31 pairs", PRIMER, "indomain"),
    ("high-variance threshold (sd over models)", "0.12", PRIMER, "hv_threshold"),
    ("top-tier places on high-variance tasks held by multi-species or eukaryotic-gene pretraining",
     "32 of 39", PRIMER, "hv_places"),
)


#: Models whose pretraining-data class in GENEB's own model table (README, "Models covered")
#: differs from the catalogue's (which follows the model card): GENEB's label. Used only to
#: recount GENEB's high-variance top places the way the paper labels the models.
GENEB_LABEL_DIFFERS = {
    "METAGENE-1": "multi-species", "GenomeOcean-4B": "multi-species",
    "GenomeOcean-500M": "multi-species", "dna_gpt0.1b_h": "multi-species",
    "gena-lm-bert-large-t2t": "multi-species", "DNABERT-S": "multi-species-microbial",
}


def build_tables(root: Path) -> tuple[Path, Path]:
    """Build the two reports under ``root``; returns their ``tables`` folders (all, official)."""
    import geneb
    from geneb.analysis.report import SECTIONS, build_report
    from geneb.models.catalogue import published_facts

    rows = geneb.read_results("published:geneb")
    build_report(rows, root / "all", catalogue=published_facts, scaling_exclude=OUTLIER)
    official = rows[rows["official"].astype(bool)].reset_index(drop=True)
    keep = ("leaderboard", "categories", "rankings", "scaling", "fewshot", "difficulty",
            "in_domain_models")
    build_report(official, root / "official", catalogue=published_facts,
                 scaling_exclude=OUTLIER, sections=[s for s in SECTIONS if s.__name__ in keep])
    return root / "all" / "tables", root / "official" / "tables"


def _f(x: object, nd: int = 3) -> str:
    """A cell: text as is, whole numbers (ints, or floats with ``nd`` 0) without decimals."""
    if isinstance(x, (str, bool, np.bool_)):
        return str(x)
    if x is None or pd.isna(x):
        return "-"
    if isinstance(x, (int, np.integer)) or nd == 0:
        return str(int(round(float(x))))
    return f"{float(x):.{nd}f}"


def _p(x: float) -> str:
    return f"{x:.2g}"


def _md(df: pd.DataFrame, fmt: dict[str, object] | None = None) -> str:
    fmt = fmt or {}
    head = "| " + " | ".join(df.columns) + " |\n|" + "---|" * len(df.columns) + "\n"
    lines = []
    for rec in df.to_dict("records"):
        cells = []
        for c, v in rec.items():
            f = fmt.get(c)
            cells.append(f(v) if callable(f) else _f(v, f if isinstance(f, int) else 3))
        lines.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(lines) + "\n"


def _read(tables: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(tables / f"{name}.csv", keep_default_na=True)


REGIMES = (("full", "full data"), ("10", "10-shot"), ("1", "1-shot"))


def _leaderboards(t: Path) -> str:
    out = ["## 1. Leaderboard: top 5 per regime (all 41 records)\n",
           "macro-MCC = mean of the 13 category means; micro-MCC = mean over the 100 tasks; "
           "ci: 95% bootstrap over tasks within categories (2,000 resamples, seed 0); rank_ci "
           "the same for the rank. No interval over seeds: each value is GENEB's mean over its "
           "five seeds.\n"]
    for reg, label in REGIMES:
        lb = _read(t, f"leaderboard_{reg}").head(5)
        lb = lb.assign(ci=[f"{a:.3f}-{b:.3f}"
                           for a, b in zip(lb["ci_low"], lb["ci_high"], strict=True)],
                       rank_ci=[f"{int(a)}-{int(b)}" for a, b in
                                zip(lb["rank_ci_low"], lb["rank_ci_high"], strict=True)])
        out.append(f"**{label}**\n\n" + _md(
            lb[["rank", "model", "official", "n_params", "macro_mcc", "micro_mcc", "ci",
                "rank_ci"]],
            {"rank": 0, "n_params": lambda v: f"{v:,.0f}"}))
    return "\n".join(out)


def _instability(t: Path) -> str:
    corr = _read(t, "category_rank_correlations")
    corr = corr[(corr["probe"] == "linear") & (corr["scope_a"] != "overall")]
    rows = [(label, len(g), g["spearman_rho"].median(), g["spearman_rho"].min(),
             g["spearman_rho"].max()) for reg, label in REGIMES
            for g in [corr[corr["regime"].astype(str) == reg]]]
    lines = ["## 2. Rankings across categories and regimes\n",
             "Spearman between the model rankings of every pair of the 13 categories "
             "(78 pairs):\n",
             _md(pd.DataFrame(rows, columns=["regime", "pairs", "median rho", "min rho",
                                             "max rho"]), {"pairs": 0})]
    sh = _read(t, "leader_shifts_headline")
    sh["regime"] = sh["regime"].astype(str)
    wide = sh.pivot(index="scope", columns="regime", values="leader")
    score = sh.pivot(index="scope", columns="regime", values="leader_macro_mcc")
    rank = sh.pivot(index="scope", columns="regime", values="reference_leader_rank")
    order = ["overall"] + sorted(s for s in wide.index if s != "overall")
    table = pd.DataFrame({
        "scope": order,
        **{f"leader, {label}": [f"{wide.loc[s, reg]} ({score.loc[s, reg]:.3f})" for s in order]
           for reg, label in REGIMES},
        **{f"full leader's rank, {label}": [int(rank.loc[s, reg]) for s in order]
           for reg, label in REGIMES[1:]},
    })
    lines += ["Leader of each scope per regime (its macro-MCC), and the rank of the full-data "
              "leader in the few-shot regimes:\n", _md(table)]
    cats = sh[sh["scope"] != "overall"]
    for reg, label in REGIMES[1:]:
        g = cats[cats["regime"] == reg]
        lines.append(f"- {label}: another model leads in {int(g['changed'].sum())} of {len(g)} "
                     "categories.")
    return "\n".join(lines) + "\n"


def _scaling(t: Path) -> str:
    sv = _read(t, "scaling_variants")
    sv = sv[sv["probe"] == "linear"].assign(regime=lambda d: d["regime"].astype(str))
    sv = sv.assign(_o=sv["scope"] != "overall").sort_values(["_o", "scope"], kind="stable")
    lines = ["## 3. Scaling: Spearman of log10(parameters) against macro-MCC\n",
             f"All 41 sized models, and without {', '.join(OUTLIER)} (GENEB's prokaryotic "
             "outlier).\n"]
    for reg, label in REGIMES:
        g = sv[sv["regime"] == reg]
        a = g[g["models"] == "all"].set_index("scope")
        w = g[g["models"] != "all"].set_index("scope")
        tab = pd.DataFrame({"scope": a.index, "n": a["n_models"].to_numpy(),
                            "rho": a["spearman_rho"].to_numpy(),
                            "p": [_p(x) for x in a["spearman_p"]],
                            "rho without": w.loc[a.index, "spearman_rho"].to_numpy(),
                            "p without": [_p(x) for x in w.loc[a.index, "spearman_p"]]})
        lines.append(f"**{label}**\n\n" + _md(tab, {"n": 0}))
    return "\n".join(lines)


def _fewshot(t: Path) -> str:
    rm = _read(t, "regime_means_headline").assign(regime=lambda d: d["regime"].astype(str))
    lines = ["## 4. Few-shot degradation\n", "Mean macro-MCC over the 41 models per regime:\n",
             _md(rm[["regime", "n_models", "mean_macro_mcc"]], {"n_models": 0})]
    cs = _read(t, "fewshot_category_summary_headline").assign(
        regime=lambda d: d["regime"].astype(str))
    lines.append("Per scope and regime, over models: mean full-data and k-shot score, mean "
                 "absolute drop, mean relative drop (of each model's drop / its full score) and "
                 "the drop of the means:\n")
    cs = cs.assign(_o=cs["scope"] != "overall").sort_values(["_o", "scope", "regime"],
                                                            kind="stable")
    lines.append(_md(cs[["scope", "regime", "mean_full_macro_mcc", "mean_macro_mcc",
                         "mean_drop_abs", "mean_drop_rel", "drop_rel_of_means"]]))
    cd = _read(t, "fewshot_ceiling_drop")
    cd = cd[cd["probe"] == "linear"]
    lines.append("Full-data macro-MCC (ceiling) against absolute drop, Spearman over models: "
                 + "; ".join(f"{r.regime}-shot rho = {r.spearman_rho:.3f} (p = "
                             f"{_p(r.spearman_p)})" for r in cd.itertuples()) + ".\n")
    deg = _read(t, "fewshot_degradation_headline").assign(
        regime=lambda d: d["regime"].astype(str))
    for reg, label in REGIMES[1:]:
        g = deg[deg["regime"] == reg].sort_values("drop_rel")
        pick = pd.concat([g.head(3), g.tail(3)])
        lines.append(f"{label}: the three smallest and the three largest relative drops:\n\n"
                     + _md(pick[["model", "full_macro_mcc", "macro_mcc", "drop_abs",
                                 "drop_rel"]]))
    return "\n".join(lines)


def _difficulty(t: Path) -> str:
    s = _read(t, "task_difficulty_summary_headline").assign(
        regime=lambda d: d["regime"].astype(str))
    lines = ["## 5. Task difficulty\n",
             "easy: mean MCC over the 41 models > 0.70; hard: < 0.35; high variance: sd over "
             "models (ddof 1) > 0.12.\n",
             _md(s[["regime", "n_tasks", "n_easy", "n_medium", "n_hard", "n_high_variance",
                    "easy_threshold", "hard_threshold", "high_variance_threshold"]],
                 {c: 0 for c in ("n_tasks", "n_easy", "n_medium", "n_hard",
                                 "n_high_variance")} | {"easy_threshold": 2,
                                                        "hard_threshold": 2,
                                                        "high_variance_threshold": 2})]
    full = _read(t, "task_difficulty_summary")
    full = full[(full["probe"] == "linear") & (full["regime"].astype(str) == "full")].iloc[0]
    for key, label in (("easy_tasks", "Easy"), ("hard_tasks", "Hard"),
                       ("high_variance_tasks", "High-variance")):
        tasks = str(full[key]).split(";") if isinstance(full[key], str) else []
        lines.append(f"- {label} tasks, full data ({len(tasks)}): {', '.join(tasks) or '-'}.")
    places = _read(t, "high_variance_top_places_by_pretraining")
    lines.append("\nTop-3 places on the full-data high-variance tasks by the model's "
                 "pretraining-data class (model catalogue):\n")
    lines.append(_md(places, {"n_places": 0, "of_places": 0}))
    return "\n".join(lines)


def _tiers(t: Path) -> str:
    sc = _read(t, "tier_scores").assign(regime=lambda d: d["regime"].astype(str))
    ga = _read(t, "tier_gains").assign(regime=lambda d: d["regime"].astype(str))
    fs = _read(t, "tier_fewshot").assign(regime=lambda d: d["regime"].astype(str))
    ga = ga.assign(ci=[f"{a:.3f} to {b:.3f}"
                       for a, b in zip(ga["ci_low"], ga["ci_high"], strict=True)])
    return "\n".join([
        "## 6. Capacity tiers (<=200M, 200M-1B, >1B; each tier includes its upper edge)\n",
        _md(sc[["regime", "tier", "n_models", "mean_macro_mcc"]], {"n_models": 0}),
        "Gain between tiers (95% bootstrap over models within tiers):\n",
        _md(ga[["regime", "tier_low", "tier_high", "n_low", "n_high", "gain", "ci"]],
            {"n_low": 0, "n_high": 0}),
        "Mean relative and absolute few-shot drop per tier:\n",
        _md(fs[["regime", "tier", "n_models", "mean_drop_rel", "mean_drop_abs"]],
            {"n_models": 0}),
    ])


def _smaller(t: Path) -> str:
    c = _read(t, "in_domain_set_counts").assign(regime=lambda d: d["regime"].astype(str))
    members = _read(t, "in_domain_set")
    out = members[~members["in_domain"].astype(bool)]
    return "\n".join([
        "## 7. Smaller beats larger (size ratio >= 5, overall macro-MCC)\n",
        "In-domain set: the models whose pretraining-data class covers human tasks (human, "
        "eukaryotic, multi-species); outside it: "
        + ", ".join(f"{m} ({p})" for m, p in
                    zip(out["model"], out["pretraining_data_class"], strict=True))
        + ".\n",
        _md(c[["models", "regime", "n_models", "n_pairs_size_ratio", "n_smaller_better"]],
            {"n_models": 0, "n_pairs_size_ratio": 0, "n_smaller_better": 0}),
    ])


def _agreement(t: Path) -> str:
    mm = _read(t, "macro_micro_agreement")
    mm = mm[mm["probe"] == "linear"].assign(regime=lambda d: d["regime"].astype(str))
    sh = _read(t, "macro_micro_rank_shifts_headline").assign(
        regime=lambda d: d["regime"].astype(str))
    m = mm.merge(sh, on="regime")
    m = m.assign(kendall_p=[_p(x) for x in m["kendall_p"]])
    return "\n".join([
        "## 8. Macro- vs micro-MCC rankings\n",
        _md(m[["regime", "n_models_x", "spearman_rho", "kendall_tau", "kendall_p",
               "n_same_rank", "max_abs_rank_shift", "same_leader", "n_top_in_both"]].rename(
            columns={"n_models_x": "n_models", "n_top_in_both": "top-5 in both"}),
            {"n_models": 0, "n_same_rank": 0, "max_abs_rank_shift": 0, "top-5 in both": 0,
             "same_leader": str}),
    ])


def _geneb_values(t: Path) -> dict[str, str]:
    """geneb's value for each :data:`PAPER` key, from the 40-official report's tables."""
    lb = _read(t, "leaderboard_full")
    agg = _read(t, "aggregates")
    agg = agg[(agg["probe"] == "linear") & (agg["regime"].astype(str) == "full")]
    cat = agg.set_index(["model", "scope"])["macro_mcc"]
    top6 = list(lb["model"].head(6))
    v = {"counts": f"{len(lb)} / {int(lb['n_tasks'].iloc[0])} / "
                   f"{int(lb['n_categories'].iloc[0])}",
         "top6": ", ".join(top6)}
    for r in lb.itertuples():
        v[f"macro:{r.model}"] = f"{r.macro_mcc:.3f} (rank {r.rank})"
        v[f"micro:{r.model}"] = f"{r.micro_mcc:.3f}"
    for m in top6:
        for c in ("histone_modifications", "splice_sites"):
            v[f"cat:{m}:{c}"] = f"{cat[(m, c)]:.3f}"
    for c in ("histone_modifications", "splice_sites"):
        best = max(top6, key=lambda m, c=c: cat[(m, c)])
        for m in top6:
            v[f"cat:{m}:{c}"] += " (best of the top 6)" if m == best else ""
    for c in ("promoters", "dna_methylation"):
        vals = [cat[(m, c)] for m in top6]
        v[f"range:{c}"] = f"{min(vals):.3f}-{max(vals):.3f}"
    sv = _read(t, "scaling_variants_headline")
    ov = sv[sv["scope"] == "overall"].set_index("models")
    for key, name in (("rho:all", "all"), ("rho:without", f"without {', '.join(OUTLIER)}")):
        v[key] = f"{ov.loc[name, 'spearman_rho']:.3f} (p = {_p(ov.loc[name, 'spearman_p'])})"
    sh = _read(t, "leader_shifts_headline")
    g = sh[(sh["scope"] != "overall") & (sh["regime"].astype(str) == "10")]
    v["reranks10"] = f"{int(g['changed'].sum())} of {len(g)}"
    cd = _read(t, "fewshot_ceiling_drop")
    v["ceiling"] = "; ".join(f"{r.regime}-shot rho = {r.spearman_rho:.3f}"
                             for r in cd[cd["probe"] == "linear"].itertuples())
    c = _read(t, "in_domain_set_counts")
    c = c[(c["regime"].astype(str) == "full") & (c["models"] == "in-domain set")].iloc[0]
    v["indomain"] = (f"{int(c['n_models'])} models (rule: pretraining covers human tasks); "
                     f"{int(c['n_smaller_better'])} of {int(c['n_pairs_size_ratio'])} pairs")
    ds = _read(t, "task_difficulty_summary_headline")
    v["hv_threshold"] = f"{ds['high_variance_threshold'].iloc[0]:g}"
    pl = _read(t, "high_variance_top_places_by_pretraining").set_index("pretraining_data_class")
    held = sum(int(pl["n_places"].get(k, 0)) for k in ("multi-species", "eukaryotic"))
    places = _read(t, "high_variance_top_places")
    label = places["model"].map(GENEB_LABEL_DIFFERS).fillna(places["pretraining_data_class"])
    relabelled = int(label.isin(["multi-species", "eukaryotic"]).sum())
    v["hv_places"] = (f"{held} of {int(pl['of_places'].iloc[0])} (catalogue classes); "
                      f"{relabelled} of {len(places)} with GENEB's own labels")
    return v


def _comparison(t: Path) -> str:
    v = _geneb_values(t)
    rows = [(what, paper, v[key], where) for what, paper, where, key in PAPER]
    return "\n".join([
        "## 9. The paper's numbers against geneb's\n",
        "geneb's values here come from the report on the 40 official records (GENEB's own "
        "set: splicebert-1024nt, self-reported, left out). The paper's values are held out: "
        "printed here, never used by an analysis. Where the paper text itself could not be "
        "read, the place names the summary or README that states it.\n",
        _md(pd.DataFrame(rows, columns=["what", "paper", "geneb", "where the paper states it"])),
    ])


def render(all_tables: Path, official_tables: Path) -> str:
    """The page, from the two reports' tables (all 41 records; 40 official)."""
    head = (
        "# GENEB recomputed\n\n"
        "What geneb's report computes from GENEB's published matrix (41 records: 40 official "
        "models and one self-reported, splicebert-1024nt; 100 tasks in 13 categories; full, "
        "10-shot and 1-shot; darlednik/GENEB@9642d48), with the numbers it gets. Generated by "
        "`python tools/geneb_recomputed.py` from the tables of `geneb report --results "
        "published:geneb --exclude-from-scaling evo-1-131k-base` (every number below is in "
        "that report's `tables/*.csv`, columns in docs/analysis.md); "
        "`tests/test_geneb_recomputed_doc.py` fails when the page and the tables disagree. "
        "Each value of the matrix is GENEB's mean over its five seeds, so there is no "
        "interval over seeds; intervals are over tasks.\n"
    )
    return "\n".join([head, _leaderboards(all_tables), _instability(all_tables),
                      _scaling(all_tables), _fewshot(all_tables), _difficulty(all_tables),
                      _tiers(all_tables), _smaller(all_tables), _agreement(all_tables),
                      _comparison(official_tables)])


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    out = Path(args[0]) if args else DEFAULT_OUT
    with tempfile.TemporaryDirectory() as tmp:
        text = render(*build_tables(Path(tmp)))
    if check:
        same = out.is_file() and out.read_text(encoding="utf-8") == text
        print(f"{out}: {'up to date' if same else 'differs from the tables'}")
        return 0 if same else 1
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
