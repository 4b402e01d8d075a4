"""GENEB's published leaderboard as a results source, against the shared transcription.

The reference is ``../shared/published/geneb-9642d48`` (GENEB's leaderboard at 9642d48,
transcribed number by number; its ``validate.py`` proves each record against the file's own
aggregates). The package data is regenerated from it and compared; every published row is
compared with the transcription's value; geneb's aggregates of those rows must be the
published micro, macro and category MCC exactly (GENEB sums in task order).
"""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import pandas as pd
import pytest
from conftest import REPO, SHARED, require_shared

import geneb
from geneb.analysis.aggregates import OVERALL, aggregate_scores
from geneb.analysis.performance import performance_matrix
from geneb.analysis.table import load_results
from geneb.results.leaderboard_file import GENEB_CATEGORY_SLUGS
from geneb.results.published import PACKAGED_FILE, PUBLISHED_COLUMNS
from geneb.results.schema import RESULT_COLUMNS
from geneb.tasks.geneb_list import geneb_tasks

SRC = SHARED / "published" / "geneb-9642d48"
REGIMES = {"full": "full", "10shot": "10", "1shot": "1"}


@pytest.fixture(scope="module")
def src() -> Path:
    return require_shared(SRC, "GENEB's published leaderboard transcription")


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return geneb.read_results("published:geneb-9642d48")


def _task_csv(src: Path, regime: str) -> list[list[str]]:
    with open(src / f"task_mcc_{regime}.csv", encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def _categories_csv(src: Path) -> dict[tuple[str, str], dict[str, str]]:
    with open(src / "categories.csv", encoding="utf-8", newline="") as f:
        return {(REGIMES[r["regime"]], r["model"]): r for r in csv.DictReader(f)}


def test_package_data_is_what_the_script_makes_from_shared(src: Path) -> None:
    script = REPO / "tools" / "make_published_geneb.py"
    spec = importlib.util.spec_from_file_location("make", script)
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    assert make.build(src) == PACKAGED_FILE.read_text(encoding="utf-8")
    assert "9642d481e40c0af23995dcd162b779613f789f97" in PACKAGED_FILE.read_text(encoding="utf-8")


def test_rows_are_the_transcription_exactly(src: Path, rows: pd.DataFrame) -> None:
    assert len(rows) == 3 * 41 * 100
    assert list(rows.columns) == [*RESULT_COLUMNS, *PUBLISHED_COLUMNS]
    got = {(r.regime, r.model, r.task): r.mcc for r in rows.itertuples()}
    for regime, name in REGIMES.items():
        table = _task_csv(src, regime)
        ids = table[0][5:]
        for r in table[1:]:
            for tid, text in zip(ids, r[5:], strict=True):
                assert got.pop((name, r[0], tid)) == float(text), (regime, r[0], tid)
            params = rows.loc[(rows["regime"] == name) & (rows["model"] == r[0]), "n_params"]
            assert set(params) == {int(r[2])}
    assert not got  # no row beyond the transcription's
    # what every row says about itself: GENEB's protocol, a mean over five seeds, no seed
    assert set(rows["probe"]) == {"linear"} and set(rows["protocol"]) == {"paper"}
    assert set(rows["C"]) == {1.0} and not rows["standardize"].any()
    assert rows["seed"].isna().all() and set(rows["n_seeds"]) == {5}
    assert set(rows["source"]) == {"darlednik/GENEB@9642d48"}


def test_rows_carry_genebs_own_categories_and_catalogue_names(src: Path,
                                                              rows: pd.DataFrame) -> None:
    with open(src / "tasks.tsv", encoding="utf-8", newline="") as f:
        genebs = {t["id"]: GENEB_CATEGORY_SLUGS[t["cat"]]
                  for t in csv.DictReader(f, delimiter="\t")}
    per_task = rows.drop_duplicates("task").set_index("task")
    assert per_task["category"].to_dict() == genebs
    listed = {t.id: t for t in geneb_tasks()}
    assert {t: listed[t].category for t in genebs} == genebs  # geneb_list.json agrees
    assert per_task["task_name"].to_dict() == {t: listed[t].catalogue_name for t in genebs}
    # where geneb's catalogue files a task elsewhere, the published row keeps GENEB's category
    from geneb.tasks.catalogue import load_task_catalogue

    cat_of = {e.name: e.category for e in load_task_catalogue() if e.kind == "classification"}
    moved = {t: (cat_of[listed[t].catalogue_name], c) for t, c in genebs.items()
             if listed[t].catalogue_name in cat_of and cat_of[listed[t].catalogue_name] != c}
    assert len(moved) == 8
    for tid, (_, genebs_cat) in moved.items():
        assert per_task.at[tid, "category"] == genebs_cat


def test_flags_are_the_leaderboards(src: Path, rows: pd.DataFrame) -> None:
    facts = _categories_csv(src)
    per_model = rows.drop_duplicates(["regime", "model"])
    for r in per_model.itertuples():
        ref = facts[(r.regime, r.model)]
        assert r.official == (ref["official"] == "true")
        assert r.zero_shot == (ref["zero_shot"] == "true")
        assert r.submitted == ref["submitted"] and r.model_display == ref["disp"]
    self_reported = set(per_model.loc[~per_model["official"].astype(bool), "model"])
    assert self_reported == {"splicebert-1024nt"}


def test_genebs_aggregates_of_the_rows_are_the_published_ones_exactly(
        src: Path, rows: pd.DataFrame) -> None:
    agg = aggregate_scores(performance_matrix(load_results("published:geneb-9642d48")))
    facts = _categories_csv(src)
    slug = GENEB_CATEGORY_SLUGS
    assert len(agg[agg["scope"] == OVERALL]) == 123
    for r in agg.itertuples():
        ref = facts[(r.regime, r.model)]
        if r.scope == OVERALL:
            assert (r.micro_mcc, r.macro_mcc) == (float(ref["micro_MCC"]), float(ref["macro_MCC"]))
            assert (r.n_tasks, r.n_categories) == (100, 13)
        else:
            name = next(c for c, s in slug.items() if s == r.scope)
            assert r.macro_mcc == float(ref[name]), (r.regime, r.model, r.scope)
    # the micro MCC per record is also the one in task_mcc_*.csv (the other published file)
    for regime, name in REGIMES.items():
        for r in _task_csv(src, regime)[1:]:
            over = agg[(agg["scope"] == OVERALL) & (agg["regime"] == name) & (agg["model"] == r[0])]
            assert over["micro_mcc"].item() == float(r[3])
            assert over["macro_mcc"].item() == float(r[4])


def test_top_models_of_the_published_leaderboard(src: Path, rows: pd.DataFrame) -> None:
    """The leaders of each regime by macro-MCC, from geneb's aggregates of the rows, are
    categories.csv's (sorted independently), with its numbers exactly."""
    agg = aggregate_scores(performance_matrix(load_results(rows)))
    facts = _categories_csv(src)
    for name in REGIMES.values():
        ours = agg[(agg["scope"] == OVERALL) & (agg["regime"] == name)].sort_values(
            "macro_mcc", ascending=False).head(3)
        ref = sorted((r for (reg, _), r in facts.items() if reg == name),
                     key=lambda r: -float(r["macro_MCC"]))[:3]
        assert list(ours["model"]) == [r["model"] for r in ref]
        assert list(ours["macro_mcc"]) == [float(r["macro_MCC"]) for r in ref]
    full = agg[(agg["scope"] == OVERALL) & (agg["regime"] == "full")].set_index("model")
    assert full.at["GENERator-eukaryote-3b-base", "macro_mcc"] == 0.6048619997778945
    assert full.at["GENERator-eukaryote-3b-base", "micro_mcc"] == float(
        facts[("full", "GENERator-eukaryote-3b-base")]["micro_MCC"])


def test_load_results_and_read_results_accept_the_source() -> None:
    df = load_results("published:geneb-9642d48")
    assert len(df) == 12300 and set(df["regime"]) == {"full", "10", "1"}
    assert geneb.read_results("published:geneb").shape[0] == 12300  # nothing imported: packaged
    with pytest.raises(geneb.GenebError, match="no published source 'nope'"):
        geneb.read_results("published:nope")


def test_a_published_source_is_read_only(tmp_path) -> None:
    from geneb.results import ResultsTable
    from geneb.results.schema import RESULTS_SCHEMA

    table = ResultsTable("published:geneb-9642d48").read()
    assert table.num_rows == 12300 and table.schema.equals(RESULTS_SCHEMA)
    rt = ResultsTable("published:geneb")
    for write in (rt.compact, lambda: rt.append(table), lambda: rt.write([]), rt.migrate):
        with pytest.raises(geneb.GenebError, match="'published:geneb' is a published source: "
                                                   "it is read-only"):
            write()
    assert not Path("published:geneb").exists()


def test_probe_refuses_a_published_out_before_any_work(tmp_path, monkeypatch) -> None:
    from probe_stores import gaussian_task

    from geneb.probe.engine import run_probes
    from geneb.store import FeatureStore

    fs = FeatureStore(tmp_path / "store", "a")
    gaussian_task(fs, "m1", "t_bin", n_train=40, n_test=20, dim=4)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(geneb.GenebError, match="is a published source: it is read-only"):
        run_probes(fs, "published:geneb")
    assert not (tmp_path / "published:geneb").exists()
