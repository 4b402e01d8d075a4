"""A user's models placed among GENEB's published 41 (``geneb report --compare geneb``),
against a hand computation: the common set, GENEB's categories for the user's tasks, each
model's macro-MCC on the common set (the published values from the shared transcription, the
user's means over seeds summed here), the ranks, the flags of incomplete categories, and the
rows left out (converged protocol, a task GENEB does not have)."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
from conftest import SHARED, require_shared
from published_fixtures import COMMON, MODELS, USER_NAME, USER_TASKS, compare_rows, user_mcc
from test_params import GOOD
from typer.testing import CliRunner

from geneb.analysis.compare_published import PAPER_ONLY, compare_with_published
from geneb.analysis.table import load_results
from geneb.cli import app
from geneb.errors import GenebError, PlanError
from geneb.pipeline.plan import load_plan
from geneb.vocabulary import DEFAULT_SEEDS

REGIMES = {"full": "full", "10": "10shot"}


def _macro(values: dict[str, float]) -> float:
    """Mean over GENEB's categories (of COMMON) of the category means, by hand."""
    cats: dict[str, list[float]] = {}
    for t, v in values.items():
        cats.setdefault(COMMON[t], []).append(v)
    means = [sum(v) / len(v) for v in cats.values()]
    return sum(means) / len(means)


def _published(regime: str) -> dict[str, dict[str, float]]:
    src = require_shared(SHARED / "published" / "geneb-9642d48", "GENEB's leaderboard")
    with open(src / f"task_mcc_{REGIMES[regime]}.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    col = {t: rows[0].index(t) for t in COMMON}
    return {r[0]: {t: float(r[i]) for t, i in col.items()} for r in rows[1:]}


def _user(regime: str) -> dict[str, dict[str, float]]:
    out = {}
    for model in MODELS:
        out[model] = {tid: sum(user_mcc(model, list(USER_TASKS).index(USER_NAME[tid]), j, regime)
                               for j in range(len(DEFAULT_SEEDS))) / 5 for tid in COMMON}
    return out


@pytest.fixture(scope="module")
def comp():
    return compare_with_published(load_results(compare_rows()), n_boot=200)


@pytest.mark.parametrize("regime", ["full", "10"])
def test_ranks_and_common_set_are_the_hand_computation(comp, regime: str) -> None:
    common = comp.common[(comp.common["regime"] == regime) & comp.common["in_common"]]
    assert list(common["task"]) == list(COMMON)  # named, in GENEB's order
    scores = {m: _macro(v) for m, v in {**_published(regime), **_user(regime)}.items()}
    over = comp.ranks[(comp.ranks["regime"] == regime) & (comp.ranks["scope"] == "overall")]
    assert len(over) == 43 and set(over["n_tasks"]) == {5}
    got = over.set_index("model")
    for model, score in scores.items():
        assert got.at[model, "macro_mcc"] == pytest.approx(score, abs=1e-12)
        rank = 1 + sum(s > score + 1e-12 for s in scores.values())
        assert got.at[model, "rank"] == rank, model
        assert got.at[model, "rank_ci_low"] <= rank <= got.at[model, "rank_ci_high"]
    assert got.at["alpha", "rank"] == 1 and got.at["alpha", "source"] == "user"
    # GENEB's category for the user's gue_mouse_0 (the catalogue's tf_binding is not used)
    scopes = set(comp.ranks.loc[comp.ranks["regime"] == regime, "scope"])
    assert scopes == {"overall", "histone_modifications", "promoters", "mouse_enhancers"}
    mouse = comp.ranks[(comp.ranks["regime"] == regime)
                       & (comp.ranks["scope"] == "mouse_enhancers")].set_index("model")
    v = _user(regime)["beta"]["leannmlindsey_GUE_mouse_0"]
    pub = _published(regime)
    assert mouse.at["beta", "macro_mcc"] == pytest.approx(v, abs=1e-12)
    assert mouse.at["beta", "rank"] == 1 + sum(
        p["leannmlindsey_GUE_mouse_0"] > v for p in pub.values()) + 1  # alpha is above too


def test_incomplete_categories_are_flagged_never_averaged_silently(comp) -> None:
    cats = comp.categories[comp.categories["regime"] == "full"].set_index("category")
    assert cats.loc["histone_modifications", ["n_geneb", "n_common"]].tolist() == [30, 2]
    assert cats.loc["promoters", ["n_geneb", "n_common"]].tolist() == [22, 2]
    assert cats.loc["mouse_enhancers", ["n_geneb", "n_common"]].tolist() == [5, 1]
    assert not cats["complete"].any()
    assert "leannmlindsey_GUE_mouse_1" in cats.at["mouse_enhancers", "missing"]
    assert (cats["n_common"] == 0).sum() == 10  # the categories with no common task
    assert not comp.ranks["complete"].any()


def test_only_paper_rows_are_compared_and_the_rest_is_counted(comp) -> None:
    assert comp.notes[0] == PAPER_ONLY
    assert comp.notes[1] == "35 converged-protocol row(s) of 1 model(s) left out."
    ex = {(r.model, r.reason): r.n_rows for r in comp.excluded.itertuples()}
    assert ex[("alpha", "converged protocol (GENEB's rows are the paper protocol)")] == 35
    assert ex[("alpha", "task not among GENEB's 100")] == 10
    assert ex[("beta", "task not among GENEB's 100")] == 10
    panel = comp.comparability.set_index(["model", "item"])
    assert panel.at[("alpha", "C"), "user"] == "1"
    assert panel.at[("alpha", "seeds"), "user"] == "10: 13, 17, 42, 123, 997; full: 13, 17, 42, " \
                                                   "123, 997"
    assert panel.at[("alpha", "standardisation"), "user"] == "features as stored"
    assert panel.at[("alpha", "tasks (full)"), "user"].startswith(
        "6 of 100 (94 missing: nt_h3, nt_h3k14ac, nt_h3k36me3, ...)")
    assert panel.at[("beta", "tasks (full)"), "user"].startswith("5 of 100 (95 missing: ")
    # test sizes: the fixture's 100 rows against the catalogue's published sizes
    assert panel.at[("beta", "test split sizes"), "user"].startswith("0 as published, 5 differ")
    assert "gue_emp_h3 100 vs 1497" in panel.at[("beta", "test split sizes"), "user"]


def test_all_100_tasks_give_the_published_ranks_back() -> None:
    """A user model on all of GENEB's tasks: the 41 keep their published scores and ranks."""
    from test_published_submission import user_rows

    comp = compare_with_published(load_results(user_rows("mine")), n_boot=100)
    over = comp.ranks[(comp.ranks["scope"] == "overall") & (comp.ranks["regime"] == "full")]
    pub = over[over["source"] == "GENEB"]
    assert len(pub) == 41 and pub["complete"].all()
    assert (pub["macro_mcc"] == pub["published_macro_mcc"]).all()  # exactly
    mine = over.set_index("model").at["mine", "macro_mcc"]
    shift = (pub["macro_mcc"] < mine).astype(int)  # models below the user's move down one
    assert ((pub["rank"] - shift) == pub["published_rank"]).all()


def test_report_command_writes_the_comparison(tmp_path: Path) -> None:
    from geneb.results import ResultsTable

    ResultsTable(tmp_path / "mine.parquet").write(compare_rows())
    out = tmp_path / "R"
    r = CliRunner().invoke(app, ["report", "--results", str(tmp_path / "mine.parquet"),
                                 "--compare", "geneb", "--out", str(out), "--n-boot", "100"])
    assert r.exit_code == 0, r.output
    for t in ("compare_ranks", "compare_overall_full", "compare_overall_10",
              "compare_categories", "compare_common_tasks", "compare_comparability",
              "compare_excluded", "compare_user_categories_full"):
        assert (out / "tables" / f"{t}.csv").is_file(), t
    page = (out / "index.html").read_text()
    assert "Compared with GENEB&#x27;s published leaderboard" in page
    assert PAPER_ONLY.replace("'", "&#x27;") in page
    assert "1 of the common set&#x27;s categories have a single task (mouse_enhancers)" in page
    assert "the overall macro-MCC here is over 3 of 13 categories" in page
    top = pd.read_csv(out / "tables" / "compare_overall_full.csv")
    assert top["model"].iloc[0] == "alpha" and top["rank"].iloc[0] == 1


def test_bad_compare_refused_before_any_work(tmp_path: Path) -> None:
    from geneb.results import ResultsTable

    conv = compare_rows()
    conv["protocol"] = "converged"
    ResultsTable(tmp_path / "conv.parquet").write(conv)
    for args, message in (
        (["--compare", "bogus"], "--compare: expected null or geneb or a published:SOURCE, got "
                                 "'bogus'"),
        ([], "--compare: the results have no rows to compare with GENEB's published ones"),
    ):
        out = tmp_path / "R"
        r = CliRunner().invoke(app, ["report", "--results", str(tmp_path / "conv.parquet"),
                                     "--out", str(out), *(args or ["--compare", "geneb"])])
        assert r.exit_code != 0 and message in r.output, r.output
        assert len(r.output.strip().splitlines()) == 1 and not out.exists()
    with pytest.raises(GenebError, match="no published source"):
        compare_with_published(load_results(compare_rows()), "published:nowhere.json")


PLAN = GOOD + 'protocol = "{protocol}"\n\n[report]\ncompare = "geneb"\n'


def test_plan_key(tmp_path: Path) -> None:
    p = tmp_path / "plan.toml"
    p.write_text(PLAN.format(protocol="paper"))
    assert load_plan(p).report_compare == "geneb"
    p.write_text(PLAN.format(protocol="converged"))
    with pytest.raises(PlanError, match=r"\[report\] compare: GENEB's published rows are the "
                                        r"paper protocol.*got 'converged'"):
        load_plan(p)
    p.write_text(PLAN.format(protocol="paper").replace('"geneb"', '"mteb"'))
    with pytest.raises(PlanError, match="compare"):
        load_plan(p)
