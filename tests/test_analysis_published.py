"""The analyses added for GENEB's published matrix (issue 27 item 3), each against a hand
computation on a small table, and the whole report on the published matrix: its aggregates
against GENEB's own micro/macro/category values, and its running time."""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from geneb.analysis.aggregates import aggregate_scores, macro_micro_ranks, rank_shift_summary
from geneb.analysis.difficulty import difficulty_summary, task_difficulty, top_placements
from geneb.analysis.domain import in_domain_set, smaller_beats_larger_within
from geneb.analysis.fewshot import (
    ceiling_drop_correlation,
    fewshot_by_scope,
    fewshot_degradation,
    fewshot_scope_summary,
)
from geneb.analysis.performance import performance_matrix
from geneb.analysis.rankings import leader_shifts
from geneb.analysis.table import load_results
from tests.conftest import SHARED, require_shared

PUBLISHED = SHARED / "published" / "geneb-9642d48"

#: model, task, category, then MCC in full, 10-shot and 1-shot: three models, four tasks, two
#: categories
_CELLS = """
a t1 x 0.9 0.5 0.1 | a t2 x 0.7 0.5 0.1 | a t3 y 0.3 0.2 0.0 | a t4 y 0.6 0.2 0.0
b t1 x 0.6 0.6 0.3 | b t2 x 0.6 0.6 0.3 | b t3 y 0.6 0.4 0.2 | b t4 y 0.6 0.4 0.2
c t1 x 0.2 0.2 0.2 | c t2 x 0.2 0.1 0.1 | c t3 y 0.8 0.1 0.1 | c t4 y 0.1 0.1 0.0
"""
#: (model, task, category) -> {regime: MCC}
CELLS = {
    tuple(f[:3]): dict(zip(("full", "10", "1"), map(float, f[3:]), strict=True))
    for cell in _CELLS.replace("\n", "|").split("|") if (f := cell.split())
}


@pytest.fixture(scope="module")
def small() -> pd.DataFrame:
    """Rows as a published source gives them: one row per cell, a mean over seeds (no seed)."""
    rows = [dict(model=m, task=t, category=c, regime=r, seed=np.nan, C=1.0, probe="linear",
                 protocol="paper", mcc=v, n_params={"a": 1e9, "b": 1e8, "c": 1e7}[m])
            for (m, t, c), by in CELLS.items() for r, v in by.items()]
    return load_results(pd.DataFrame(rows))


@pytest.fixture(scope="module")
def agg(small: pd.DataFrame) -> pd.DataFrame:
    return aggregate_scores(performance_matrix(small))


def _macro(model: str, regime: str, cat: str | None = None) -> float:
    """Hand computation: mean of category means (or one category's mean)."""
    per: dict[str, list[float]] = {}
    for (m, _t, c), by in CELLS.items():
        if m == model:
            per.setdefault(c, []).append(by[regime])
    means = {c: sum(v) / len(v) for c, v in per.items()}
    return means[cat] if cat else sum(means.values()) / len(means)


def test_fewshot_per_category_against_hand(agg: pd.DataFrame) -> None:
    by = fewshot_by_scope(agg)
    assert set(by["scope"]) == {"overall", "x", "y"} and len(by) == 3 * 3 * 2
    row = by[(by["scope"] == "y") & (by["model"] == "c") & (by["regime"] == "10")].iloc[0]
    full, ten = _macro("c", "full", "y"), _macro("c", "10", "y")
    assert row["drop_abs"] == pytest.approx(full - ten)
    assert row["drop_rel"] == pytest.approx((full - ten) / full)
    summ = fewshot_scope_summary(by)
    s = summ[(summ["scope"] == "x") & (summ["regime"] == "1")].iloc[0]
    drops = [_macro(m, "full", "x") - _macro(m, "1", "x") for m in "abc"]
    rels = [d / _macro(m, "full", "x") for d, m in zip(drops, "abc", strict=True)]
    fulls = [_macro(m, "full", "x") for m in "abc"]
    ones = [_macro(m, "1", "x") for m in "abc"]
    assert s["n_models"] == 3 and s["mean_drop_abs"] == pytest.approx(np.mean(drops))
    assert s["mean_drop_rel"] == pytest.approx(np.mean(rels))
    assert s["drop_rel_of_means"] == pytest.approx(1 - np.mean(ones) / np.mean(fulls))
    assert list(summ["regime"].unique()) == ["1", "10"]  # fewest shots first


def test_ceiling_drop_correlation_against_pandas(agg: pd.DataFrame) -> None:
    deg = fewshot_degradation(agg)
    cor = ceiling_drop_correlation(deg).set_index("regime")
    for regime in ("1", "10"):
        g = deg[deg["regime"] == regime]
        expected = g["full_macro_mcc"].rank().corr(g["drop_abs"].rank())  # Spearman by hand
        assert cor.loc[regime, "spearman_rho"] == pytest.approx(expected)
        assert cor.loc[regime, "n_models"] == 3


def test_leader_shifts_against_hand(agg: pd.DataFrame) -> None:
    sh = leader_shifts(agg)
    ref = {s: max("abc", key=lambda m, s=s: _macro(m, "full", None if s == "overall" else s))
           for s in ("overall", "x", "y")}
    for r in sh.itertuples():
        cat = None if r.scope == "overall" else r.scope
        scores = {m: _macro(m, r.regime, cat) for m in "abc"}
        leader = max(scores, key=scores.get)
        assert r.leader == leader and r.reference_leader == ref[r.scope], r
        assert r.reference_leader_rank == 1 + sum(v > scores[ref[r.scope]] for v in
                                                  scores.values())
        assert r.changed == (leader != ref[r.scope])
    assert list(sh[sh["scope"] == "x"]["regime"]) == ["1", "10", "full"]


def test_macro_micro_ranks_against_hand(agg: pd.DataFrame) -> None:
    ranks = macro_micro_ranks(agg)
    full = ranks[ranks["regime"] == "full"].set_index("model")
    micro = {m: np.mean([by["full"] for (mm, _t, _c), by in CELLS.items() if mm == m])
             for m in "abc"}
    macro = {m: _macro(m, "full") for m in "abc"}
    for m in "abc":
        assert full.loc[m, "micro_mcc"] == pytest.approx(micro[m])
        assert full.loc[m, "macro_rank"] == 1 + sum(v > macro[m] for v in macro.values())
        assert full.loc[m, "micro_rank"] == 1 + sum(v > micro[m] for v in micro.values())
    shifts = rank_shift_summary(ranks, top=2).set_index("regime")
    assert shifts.loc["full", "n_models"] == 3
    assert shifts.loc["full", "max_abs_rank_shift"] == int(full["rank_shift"].abs().max())


def test_difficulty_summary_names_thresholds(small: pd.DataFrame) -> None:
    perf = performance_matrix(small)
    diff = task_difficulty(perf, easy=0.5, hard=0.3, high_variance=0.25)
    summ = difficulty_summary(diff, (0.5, 0.3, 0.25)).set_index("regime")
    row = summ.loc["full"]
    means = {t: np.mean([by["full"] for (_m, tt, _c), by in CELLS.items() if tt == t])
             for t in ("t1", "t2", "t3", "t4")}
    sds = {t: np.std([by["full"] for (_m, tt, _c), by in CELLS.items() if tt == t], ddof=1)
           for t in means}
    assert row["easy_tasks"] == ";".join(t for t in sorted(means) if means[t] > 0.5)
    assert row["hard_tasks"] == ";".join(t for t in sorted(means) if means[t] < 0.3)
    assert row["high_variance_tasks"] == ";".join(t for t in sorted(sds) if sds[t] > 0.25)
    assert (row["easy_threshold"], row["hard_threshold"], row["high_variance_threshold"]) == (
        0.5, 0.3, 0.25)
    assert row["n_easy"] + row["n_medium"] + row["n_hard"] == row["n_tasks"] == 4


def test_top_placements_and_in_domain_set(small: pd.DataFrame, agg: pd.DataFrame) -> None:
    perf = performance_matrix(small)
    props = pd.DataFrame({"model": list("abc"), "n_params": [1e9, 1e8, 1e7],
                          "pretraining_data_class": ["human", "plant", None]})
    top = top_placements(perf[perf["regime"] == "full"], ["t3"], props, top=2)
    assert list(top["model"]) == ["c", "b"] and list(top["place"]) == [1, 2]
    assert top["pretraining_data_class"].isna().iloc[0] and top["pretraining_data_class"].iloc[
        1] == "plant"
    models, rule = in_domain_set(props)
    assert models == ["a"] and "human" in rule
    assert in_domain_set(props, ["c", "a"])[0] == ["a", "c"]
    ov = agg[(agg["scope"] == "overall")]
    sizes = dict(zip(props["model"], props["n_params"], strict=True))
    counts, pairs = smaller_beats_larger_within(ov, sizes, ["a", "b", "c"], factor=5)
    for regime in ("1", "10", "full"):
        n_better = sum(_macro(s, regime) > _macro(la, regime)
                       for s, la in (("b", "a"), ("c", "a"), ("c", "b")))
        row = counts[counts["regime"] == regime].iloc[0]
        assert (row["n_pairs_size_ratio"], row["n_smaller_better"]) == (3, n_better)
        assert len(pairs[pairs["regime"] == regime]) == n_better


# --- the published matrix -------------------------------------------------------------------

REGIME = {"full": "full", "10shot": "10", "1shot": "1"}


def _published_rows() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(rows in the results schema, GENEB's categories.csv): the rows built here from the
    shared transcription, independently of geneb's published source."""
    tasks = require_shared(PUBLISHED / "tasks.tsv", "GENEB's published leaderboard")
    with tasks.open(encoding="utf-8") as f:
        cat_of = {r["id"]: r["cat"] for r in csv.DictReader(f, delimiter="\t")}
    rows = []
    for name, regime in REGIME.items():
        wide = pd.read_csv(PUBLISHED / f"task_mcc_{name}.csv")
        for rec in wide.to_dict("records"):
            for task, cat in cat_of.items():
                rows.append((rec["model"], task, cat, regime, float(rec[task]), rec["params"]))
    df = pd.DataFrame(rows, columns=["model", "task", "category", "regime", "mcc", "n_params"])
    df = df.assign(seed=np.nan, C=1.0, probe="linear", protocol="paper")
    ref = pd.read_csv(PUBLISHED / "categories.csv").assign(
        regime=lambda d: d["regime"].map(REGIME))
    return df, ref


def test_aggregates_equal_the_published_ones() -> None:
    """micro, macro and every category mean as GENEB publishes them, for all 123 records,
    exactly (geneb sums in GENEB's task order, as GENEB does), from rows built here."""
    rows, ref = _published_rows()
    agg = aggregate_scores(performance_matrix(load_results(rows)))
    ov = agg[agg["scope"] == "overall"].merge(ref, on=["regime", "model"], validate="1:1")
    assert len(ov) == 123 and (ov["n_tasks"] == 100).all() and (ov["n_categories"] == 13).all()
    assert (ov["macro_mcc"] == ov["macro_MCC"]).all()
    assert (ov["micro_mcc"] == ov["micro_MCC"]).all()
    cats = agg[agg["scope"] != "overall"].merge(ref, on=["regime", "model"])
    published = cats.apply(lambda r: r[r["scope"]], axis=1).astype(float)
    assert len(cats) == 123 * 13
    assert (cats["macro_mcc"].to_numpy() == published.to_numpy()).all()


def test_report_on_the_published_matrix(published_report) -> None:
    """The whole report on ``published:geneb`` (41 models x 100 tasks x 3 regimes): completes,
    says that the rows are seed means (no interval over seeds), its leaderboard is GENEB's.
    (The report is built once per session, conftest.py: the browser test lays it out.)"""
    _rows, ref = _published_rows()
    index, seconds = published_report
    assert seconds < 120, seconds
    page = index.read_text(encoding="utf-8")
    assert "every row is a mean over seeds as published" in page
    tables = index.parent / "tables"
    assert not (tables / "bootstrap_seeds.csv").exists()
    lb = pd.read_csv(tables / "leaderboard_full.csv")
    assert "seed_ci_low" not in lb.columns and len(lb) == 41
    full = ref[ref["regime"] == "full"].sort_values("macro_MCC", ascending=False)
    assert list(lb["model"].head(6)) == list(full["model"].head(6))
    for name in ("fewshot_category_summary", "leader_shifts", "macro_micro_ranks",
                 "task_difficulty_summary", "scaling_variants", "in_domain_set_counts"):
        assert (tables / f"{name}.csv").is_file(), name


def test_unknown_in_domain_model_refused_before_any_work(small: pd.DataFrame, tmp_path) -> None:
    from geneb.analysis.report import build_report
    from geneb.errors import GenebError

    with pytest.raises(GenebError, match="in_domain_models: model 'zz' is not in the results"):
        build_report(small, tmp_path / "R", in_domain_models=["a", "zz"])
    assert not (tmp_path / "R").exists()


def test_cli_names_the_option_of_an_unknown_in_domain_model(tmp_path) -> None:
    from typer.testing import CliRunner

    from geneb.cli import app

    res = CliRunner().invoke(app, ["report", "--results", "published:geneb", "--out",
                                   str(tmp_path / "R"), "--in-domain-models", "MutBERT,zz"])
    assert res.exit_code == 2, res.output
    assert "--in-domain-models: model 'zz' is not in the results" in " ".join(res.output.split())
    assert not (tmp_path / "R").exists()
