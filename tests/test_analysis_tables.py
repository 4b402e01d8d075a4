"""Every analysis table against an independent computation on a fixture table of known structure.

References are written differently from the implementation: plain-Python loops over rows,
``statistics``, pandas ``rank``/``corr`` instead of scipy, explicit double loops for pairs.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections import defaultdict

import numpy as np
import pandas as pd
import pytest
from example_results import EXAMPLE_MODELS, EXAMPLE_TASKS, example_results

from geneb.analysis.aggregates import aggregate_scores, macro_micro_agreement
from geneb.analysis.difficulty import task_difficulty
from geneb.analysis.fewshot import fewshot_degradation, regime_means
from geneb.analysis.metadata import metadata_groups, model_metadata
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
from geneb.analysis.scaling import scaling_correlation, smaller_beats_larger
from geneb.analysis.stability import paired_probe_scores, per_task_probe_agreement, probe_stability
from geneb.analysis.table import load_results

SEEDS = (13, 17, 42)
CS = (0.1, 1.0, 10.0)


def _ckey(c: float) -> float | None:
    return None if c is None or (isinstance(c, float) and math.isnan(c)) else float(c)


@pytest.fixture(scope="module")
def res() -> pd.DataFrame:
    return load_results(example_results(seeds=SEEDS, Cs=CS, noise=0.05))


@pytest.fixture(scope="module")
def ref_cells(res: pd.DataFrame) -> dict[tuple, list[float]]:
    """(probe, C or None, regime, model, task) -> MCC of every seed, by a loop over rows."""
    cells: dict[tuple, list[float]] = defaultdict(list)
    for r in res.itertuples(index=False):
        cells[(r.probe, _ckey(r.C), r.regime, r.model, r.task)].append(float(r.mcc))
    return cells


@pytest.fixture(scope="module")
def ref_macro(ref_cells) -> dict[tuple, float]:
    """(probe, C, regime, model, scope) -> macro-MCC as in the GENEB paper: a category's score
    is the mean over its tasks of seed means; overall is the mean over categories of those."""
    per: dict[tuple, list[float]] = defaultdict(list)
    for (probe, c, regime, model, task), v in ref_cells.items():
        per[(probe, c, regime, model, EXAMPLE_TASKS[task][0])].append(statistics.fmean(v))
    out = {k: statistics.fmean(v) for k, v in per.items()}
    by_model: dict[tuple, list[float]] = defaultdict(list)
    for (probe, c, regime, model, _scope), v in list(out.items()):
        by_model[(probe, c, regime, model, "overall")].append(v)
    out.update({k: statistics.fmean(v) for k, v in by_model.items()})
    return out


@pytest.fixture(scope="module")
def agg(res) -> pd.DataFrame:
    return aggregate_scores(performance_matrix(res))


def _key(row) -> tuple:
    return (row["probe"], _ckey(row["C"]), row["regime"], row["model"])


def test_fixture_has_expected_shape(res):
    n_lin = len(EXAMPLE_MODELS) * len(EXAMPLE_TASKS) * 3 * len(SEEDS) * len(CS)
    n_mlp = len(EXAMPLE_MODELS) * len(EXAMPLE_TASKS) * 3 * len(SEEDS)
    assert len(res) == n_lin + n_mlp
    assert res.loc[res["probe"] == "mlp", "C"].isna().all()


def test_performance_matrix(res, ref_cells):
    perf = performance_matrix(res)
    assert len(perf) == len(ref_cells)
    for _, row in perf.iterrows():
        v = ref_cells[(row["probe"], _ckey(row["C"]), row["regime"], row["model"], row["task"])]
        assert row["n_seeds"] == len(v) == len(SEEDS)
        assert row["mcc_mean"] == pytest.approx(statistics.fmean(v), abs=1e-12)
        assert row["mcc_sd"] == pytest.approx(statistics.stdev(v), abs=1e-12)
        assert row["n_test"] == EXAMPLE_TASKS[row["task"]][2]
        assert row["category"] == EXAMPLE_TASKS[row["task"]][0]
    # full-data fits are seed-independent in the fixture (as the engine writes them)
    assert perf.loc[perf["regime"] == "full", "mcc_sd"].abs().max() == pytest.approx(0.0)
    assert perf.loc[perf["regime"] == "1", "mcc_sd"].min() > 0


def test_aggregates_macro_and_micro(agg, ref_cells, ref_macro):
    n_scopes = 1 + len({c for c, _, _ in EXAMPLE_TASKS.values()})
    assert len(agg) == len(ref_macro) == (len(CS) + 1) * 3 * len(EXAMPLE_MODELS) * n_scopes
    for _, row in agg.iterrows():
        k = (*_key(row), row["scope"])
        assert row["macro_mcc"] == pytest.approx(ref_macro[k], abs=1e-12)
        tasks = [t for t, (c, _, _) in EXAMPLE_TASKS.items() if row["scope"] in ("overall", c)]
        m = [statistics.fmean(ref_cells[(*_key(row)[:3], row["model"], t)]) for t in tasks]
        assert row["micro_mcc"] == pytest.approx(statistics.fmean(m), abs=1e-12)
        assert row["n_tasks"] == len(tasks)
        assert (pd.isna(row["n_params"]) and EXAMPLE_MODELS[row["model"]][0] is None) or (
            row["n_params"] == EXAMPLE_MODELS[row["model"]][0]
        )


def test_macro_micro_agreement(agg):
    mm = macro_micro_agreement(agg)
    for _, row in mm.iterrows():
        g = agg[
            (agg["probe"] == row["probe"])
            & (agg["regime"] == row["regime"])
            & (agg["scope"] == row["scope"])
        ]
        g = g[g["C"].isna()] if pd.isna(row["C"]) else g[np.isclose(g["C"], row["C"])]
        rho = g["macro_mcc"].rank().corr(g["micro_mcc"].rank())  # Pearson of ranks
        tau = g["macro_mcc"].corr(g["micro_mcc"], method="kendall")
        assert row["n_models"] == len(g) == len(EXAMPLE_MODELS)
        assert row["spearman_rho"] == pytest.approx(rho, abs=1e-12)
        assert row["kendall_tau"] == pytest.approx(tau, abs=1e-12)


def test_rankings_and_leaders(agg, ref_macro):
    ranks = model_rankings(agg)
    for _, row in ranks.iterrows():
        k = _key(row)
        others = [
            v
            for (p, c, r, m, s), v in ref_macro.items()
            if (p, c, r, s) == (k[0], k[1], k[2], row["scope"])
        ]
        assert row["rank"] == 1 + sum(v > ref_macro[(*k, row["scope"])] for v in others)
    leaders = category_leaders(agg)
    by_ctx: dict[tuple, dict[str, float]] = defaultdict(dict)
    for (p, c, r, m, s), v in ref_macro.items():
        by_ctx[(p, c, r, s)][m] = v
    assert len(leaders) == len(by_ctx)
    for _, row in leaders.iterrows():
        d = by_ctx[(row["probe"], _ckey(row["C"]), row["regime"], row["scope"])]
        best = max(d, key=d.get)
        assert row["leader"] == best
        assert row["leader_macro_mcc"] == pytest.approx(d[best])
        second = sorted(d.values())[-2]
        assert row["margin"] == pytest.approx(d[best] - second)


def test_leader_changes(agg, ref_macro):
    changes = leader_changes(category_leaders(agg))
    cats = sorted({c for c, _, _ in EXAMPLE_TASKS.values()})
    lin1 = changes[(changes["probe"] == "linear") & np.isclose(changes["C"].fillna(-1), 1.0)]
    assert set(zip(lin1["regime_a"], lin1["regime_b"], strict=True)) == {
        ("1", "10"),
        ("1", "full"),
        ("10", "full"),
    }
    for _, row in lin1.iterrows():
        n = 0
        for cat in cats:

            def lead(reg, cat=cat):
                d = {
                    m: v
                    for (p, c, r, m, s), v in ref_macro.items()
                    if p == "linear" and c == 1.0 and r == reg and s == cat
                }
                return max(d, key=d.get)

            n += lead(row["regime_a"]) != lead(row["regime_b"])
        assert row["n_changed"] == n
        assert row["n_categories"] == len(cats)


def test_category_rank_correlations(agg):
    corr = category_rank_correlations(agg)
    sub = agg[
        (agg["probe"] == "linear") & np.isclose(agg["C"].fillna(-1), 10.0) & (agg["regime"] == "10")
    ]
    wide = sub.pivot(index="model", columns="scope", values="macro_mcc")
    ref = wide.corr(method="spearman")
    refk = wide.corr(method="kendall")
    got = corr[
        (corr["probe"] == "linear")
        & np.isclose(corr["C"].fillna(-1), 10.0)
        & (corr["regime"] == "10")
    ]
    assert len(got) == math.comb(wide.shape[1], 2)
    for _, row in got.iterrows():
        assert row["spearman_rho"] == pytest.approx(ref.loc[row["scope_a"], row["scope_b"]])
        assert row["kendall_tau"] == pytest.approx(refk.loc[row["scope_a"], row["scope_b"]])


def test_scaling_correlation_and_pairs(agg, ref_macro):
    sc = scaling_correlation(agg)
    pairs = smaller_beats_larger(agg)
    sized = {m: n for m, (n, _) in EXAMPLE_MODELS.items() if n is not None}
    for _, row in sc.iterrows():
        k = (row["probe"], _ckey(row["C"]), row["regime"])
        x = pd.Series({m: math.log(n) for m, n in sized.items()})
        y = pd.Series({m: ref_macro[(*k, m, row["scope"])] for m in sized})
        assert row["n_models"] == len(sized)  # the k-mer baseline is left out
        assert row["spearman_rho"] == pytest.approx(x.rank().corr(y.rank()), abs=1e-12)
        expect = []
        for a, b in itertools.permutations(sized, 2):
            if sized[b] >= 5 * sized[a] and y[a] > y[b]:
                expect.append((a, b))
        got = pairs[
            (pairs["probe"] == k[0]) & (pairs["regime"] == k[2]) & (pairs["scope"] == row["scope"])
        ]
        got = got[got["C"].isna()] if k[1] is None else got[np.isclose(got["C"], k[1])]
        assert sorted(zip(got["smaller_model"], got["larger_model"], strict=True)) == sorted(expect)
        assert row["n_smaller_better"] == len(expect)
        # 1m<20m, 1m<100m, 4m<20m, 4m<100m, 20m<=100m/5
        assert row["n_pairs_size_ratio"] == 5


def test_smaller_beats_larger_known_count():
    """Hand-made macro scores: exactly (A, B) and (A, C) qualify; k-mer and excluded ignored."""
    agg = pd.DataFrame(
        {
            "probe": "linear",
            "standardize": False,
            "C": 1.0,
            "regime": "full",
            "scope": "overall",
            "model": ["A", "B", "C", "D", "kmer", "E"],
            "n_params": [1e6, 5e6, 2e7, 1e8, np.nan, 1e3],
            "macro_mcc": [0.8, 0.7, 0.6, 0.9, 0.95, 0.99],
        }
    )
    pairs = smaller_beats_larger(agg, exclude=["E"])
    assert sorted(zip(pairs["smaller_model"], pairs["larger_model"], strict=True)) == [
        ("A", "B"),
        ("A", "C"),
    ]
    sc = scaling_correlation(agg, exclude=["E"])
    assert sc["n_smaller_better"].iloc[0] == 2
    assert sc["n_models"].iloc[0] == 4
    # A-B (5x), A-C, A-D, B-D, C-D (5x); B-C is only 4x
    assert sc["n_pairs_size_ratio"].iloc[0] == 5
    with_e = smaller_beats_larger(agg)
    assert len(with_e) == 2 + 4  # E (1k params) beats all four sized models


def test_fewshot(agg, ref_macro):
    deg = fewshot_degradation(agg)
    assert set(deg["regime"]) == {"1", "10"}
    for _, row in deg.iterrows():
        k = _key(row)
        full = ref_macro[(k[0], k[1], "full", k[3], "overall")]
        shot = ref_macro[(*k, "overall")]
        assert row["drop_abs"] == pytest.approx(full - shot, abs=1e-12)
        assert row["drop_rel"] == pytest.approx((full - shot) / full, abs=1e-12)
    rm = regime_means(agg)
    for _, row in rm.iterrows():
        vals = [
            v
            for (p, c, r, m, s), v in ref_macro.items()
            if p == row["probe"] and c == _ckey(row["C"]) and r == row["regime"] and s == "overall"
        ]
        assert row["mean_macro_mcc"] == pytest.approx(statistics.fmean(vals), abs=1e-12)
    assert list(rm[(rm["probe"] == "mlp")]["regime"]) == ["1", "10", "full"]


def test_task_difficulty_against_loop(res, ref_cells):
    diff = task_difficulty(performance_matrix(res), easy=0.6, hard=0.3, high_variance=0.05)
    for _, row in diff.iterrows():
        vals = [
            statistics.fmean(v)
            for (p, c, r, m, t), v in ref_cells.items()
            if (p, c, r, t) == (row["probe"], _ckey(row["C"]), row["regime"], row["task"])
        ]
        mean, sd = statistics.fmean(vals), statistics.stdev(vals)
        cls = "easy" if mean > 0.6 else "hard" if mean < 0.3 else "medium"
        assert row["mean_mcc"] == pytest.approx(mean) and row["sd_mcc"] == pytest.approx(sd)
        assert row["difficulty"] == cls and row["high_variance"] == (sd > 0.05)
    # the fixture has tasks of every class
    assert {"easy", "hard", "medium"} <= set(diff["difficulty"])


def test_task_difficulty_known_classes():
    scores = {
        "t_easy": [0.8, 0.75, 0.9],
        "t_hard": [0.1, 0.2, 0.3],
        "t_var": [0.2, 0.5, 0.8],
        "t_mid": [0.5, 0.52, 0.48],
    }
    perf = pd.DataFrame(
        [
            {
                "probe": "linear",
                "standardize": False,
                "C": 1.0,
                "regime": "full",
                "model": f"m{i}",
                "task": t,
                "category": "promoters",
                "mcc_mean": v,
            }
            for t, vs in scores.items()
            for i, v in enumerate(vs)
        ]
    )
    d = task_difficulty(perf).set_index("task")
    assert d.loc["t_easy", "difficulty"] == "easy"
    assert d.loc["t_hard", "difficulty"] == "hard"
    assert d.loc["t_var", "difficulty"] == "medium" and d.loc["t_var", "high_variance"]
    assert d.loc["t_mid", "difficulty"] == "medium" and not d.loc["t_mid", "high_variance"]
    assert not d.loc["t_easy", "high_variance"]
    # thresholds are strict: a mean exactly at a threshold is medium (exact binary values)
    edges = pd.DataFrame(
        [
            {
                "probe": "linear",
                "standardize": False,
                "C": 1.0,
                "regime": "full",
                "model": f"m{i}",
                "task": t,
                "category": "promoters",
                "mcc_mean": v,
            }
            for t, v in (("at_easy", 0.5), ("at_hard", 0.25))
            for i in range(3)
        ]
    )
    e = task_difficulty(edges, easy=0.5, hard=0.25, high_variance=0.0).set_index("task")
    assert e.loc["at_easy", "difficulty"] == "medium" and e.loc["at_hard", "difficulty"] == "medium"
    assert not e["high_variance"].any()  # sd 0 is not above 0
    assert not d.loc["t_easy", "high_variance"]


def test_probe_stability(res, ref_cells):
    paired = paired_probe_scores(res, C=1.0)
    stab = probe_stability(paired).set_index(["regime", "statistic"])
    for regime in ("1", "10", "full"):
        pairs = {
            (m, t): (
                statistics.fmean(ref_cells[("linear", 1.0, regime, m, t)]),
                statistics.fmean(ref_cells[("mlp", None, regime, m, t)]),
            )
            for m in EXAMPLE_MODELS
            for t in EXAMPLE_TASKS
        }
        lin = pd.Series({k: v[0] for k, v in pairs.items()})
        mlp = pd.Series({k: v[1] for k, v in pairs.items()})
        assert stab.loc[(regime, "spearman_model_task_pairs"), "value"] == pytest.approx(
            lin.rank().corr(mlp.rank())
        )
        lm, mm = _macro_by_model(lin), _macro_by_model(mlp)
        assert stab.loc[(regime, "spearman_model_macro"), "value"] == pytest.approx(
            lm.rank().corr(mm.rank())
        )
        per_task = [
            lin.xs(t, level=1).rank().corr(mlp.xs(t, level=1).rank()) for t in EXAMPLE_TASKS
        ]
        assert stab.loc[(regime, "per_task_spearman_median"), "value"] == pytest.approx(
            float(np.median(per_task))
        )
        assert stab.loc[(regime, "per_task_spearman_positive"), "value"] == sum(
            r > 0 for r in per_task
        )
        for k in (3, 5):
            top_l = set(sorted(lm.index, key=lambda m: -lm[m])[:k])
            top_m = set(sorted(mm.index, key=lambda m: -mm[m])[:k])
            assert stab.loc[(regime, f"top{k}_identical"), "value"] == float(top_l == top_m)
            assert stab.loc[(regime, f"top{k}_identical"), "n"] == len(top_l & top_m)
        assert stab.loc[(regime, "mean_signed_diff_mlp_minus_linear"), "value"] == pytest.approx(
            statistics.fmean(mlp - lin)
        )
    pt = per_task_probe_agreement(paired)
    assert len(pt) == 3 * len(EXAMPLE_TASKS)
    assert (pt["n_models"] == len(EXAMPLE_MODELS)).all()


def test_probe_stability_uses_common_seeds_only(res):
    # drop one MLP seed: the linear mean must then be over the two remaining seeds
    r = res[~((res["probe"] == "mlp") & (res["seed"] == 42))]
    paired = paired_probe_scores(r, C=1.0)
    one = paired[
        (paired["regime"] == "1") & (paired["model"] == "tiny-1m") & (paired["task"] == "enh_a")
    ].iloc[0]
    lin = res[
        (res["probe"] == "linear")
        & (res["C"] == 1.0)
        & (res["regime"] == "1")
        & (res["model"] == "tiny-1m")
        & (res["task"] == "enh_a")
        & res["seed"].isin([13, 17])
    ]["mcc"]
    assert one["n_seeds"] == 2
    assert one["linear_mcc"] == pytest.approx(lin.mean())


def _macro_by_model(s: pd.Series) -> pd.Series:
    """(model, task)-indexed scores -> per model, mean over categories of category means."""
    cat = s.index.get_level_values(1).map(lambda t: EXAMPLE_TASKS[t][0])
    by_cat = s.groupby([s.index.get_level_values(0), cat]).mean()
    return by_cat.groupby(level=0).mean()


def test_regularization(res, ref_macro):
    by_c = macro_by_c(performance_matrix(res))
    agree = c_rank_agreement(by_c)
    summary = c_sensitivity_summary(agree).set_index("regime")
    rng_ = mcc_range_over_c(by_c)
    models = list(EXAMPLE_MODELS)
    for regime in ("1", "10", "full"):
        table = pd.DataFrame(
            {c: {m: ref_macro[("linear", c, regime, m, "overall")] for m in models} for c in CS}
        )
        rhos, adj = [], []
        for i, j in itertools.combinations(range(len(CS)), 2):
            rho = table[CS[i]].corr(table[CS[j]], method="spearman")
            rhos.append(rho)
            if j == i + 1:
                adj.append(rho)
            got = agree[
                (agree["regime"] == regime)
                & np.isclose(agree["C_a"], CS[i])
                & np.isclose(agree["C_b"], CS[j])
            ]
            assert got["spearman_rho"].iloc[0] == pytest.approx(rho)
            assert bool(got["adjacent"].iloc[0]) == (j == i + 1)
        assert summary.loc[regime, "mean_rho"] == pytest.approx(statistics.fmean(rhos))
        assert summary.loc[regime, "min_rho"] == pytest.approx(min(rhos))
        assert summary.loc[regime, "mean_adjacent_rho"] == pytest.approx(statistics.fmean(adj))
        for m in models:
            row = rng_[(rng_["regime"] == regime) & (rng_["model"] == m)].iloc[0]
            vals = table.loc[m]
            assert row["range"] == pytest.approx(vals.max() - vals.min())
            assert row["best_C"] == vals.idxmax()


def test_model_metadata_and_groups(res, agg):
    info = pd.DataFrame(
        {
            "model": ["tiny-1m", "small-4m", "mid-20m", "big-100m", "not-in-results"],
            "architecture": ["cnn", "transformer", "transformer", "transformer", "cnn"],
            "tokenization": ["bpe", "bpe", "kmer", "", "bpe"],
        }
    )
    meta = model_metadata(res, info)
    assert sorted(meta["model"]) == sorted(EXAMPLE_MODELS)
    for _, row in meta.iterrows():
        n = EXAMPLE_MODELS[row["model"]][0]
        assert (n is None and pd.isna(row["n_params"])) or row["n_params"] == n
    assert pd.isna(meta.set_index("model").loc["kmer-4", "architecture"])
    ov = agg[
        (agg["probe"] == "linear")
        & np.isclose(agg["C"].fillna(-1), 1.0)
        & (agg["regime"] == "full")
        & (agg["scope"] == "overall")
    ]
    groups = metadata_groups(ov, meta)
    # groups with >= 2 models: transformer (3), bpe (tiny, small); cnn and kmer have one
    assert set(zip(groups["facet"], groups["value"], strict=True)) == {
        ("architecture", "transformer"),
        ("tokenization", "bpe"),
    }
    tr = groups[groups["value"] == "transformer"].set_index("model")
    scores = ov.set_index("model")["macro_mcc"]
    expected_order = sorted(["small-4m", "mid-20m", "big-100m"], key=lambda m: -scores[m])
    assert [tr.index[tr["rank_in_group"] == r][0] for r in (1, 2, 3)] == expected_order
    assert (tr["n_models"] == 3).all()


def test_probe_stability_known_structure():
    """Linear order A>B>C>D>E, MLP order A>B>D>C>E on every task: top-3 differs, top-5 same."""
    lin = {"A": 0.9, "B": 0.8, "C": 0.7, "D": 0.6, "E": 0.5}
    mlp = {"A": 0.95, "B": 0.85, "C": 0.6, "D": 0.7, "E": 0.4}
    rows = []
    for task in ("t1", "t2", "t3"):
        for m in lin:
            for probe, c, v in (("linear", 1.0, lin[m]), ("mlp", np.nan, mlp[m])):
                rows.append(
                    {
                        "model": m,
                        "task": task,
                        "category": "promoters",
                        "regime": "full",
                        "seed": 13,
                        "C": c,
                        "probe": probe,
                        "standardize": False,
                        "mcc": v,
                    }
                )
    stab = probe_stability(paired_probe_scores(pd.DataFrame(rows), C=1.0))
    s = stab.set_index("statistic")
    assert s.loc["top3_identical", "value"] == 0.0 and s.loc["top3_identical", "n"] == 2
    assert s.loc["top5_identical", "value"] == 1.0 and s.loc["top5_identical", "n"] == 5
    assert s.loc["spearman_model_macro", "value"] == pytest.approx(0.9)  # one adjacent swap
    assert s.loc["per_task_spearman_positive", "value"] == 3
    diff = statistics.fmean(mlp[m] - lin[m] for m in lin)
    assert s.loc["mean_signed_diff_mlp_minus_linear", "value"] == pytest.approx(diff)
