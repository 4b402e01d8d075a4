"""GENEB's submission file: exported from a user's paper-protocol rows, read back as a
published source (the round trip), and GENEB's own submission shape read as the published rows.

Facts of the format from darlednik/GENEB ``submissions/splicebert-1024nt.json`` @ e14bb82:
``schema_version`` "1.0", ``model_id``, ``harness_version``, ``meta`` {display, params, url,
zero_shot, training_data, provenance, submitted_by}, ``results`` {full, 10shot, 1shot: {task id:
{MCC, Acc, F1}}}; its first full-data values (H3: MCC 0.7367776543707047, Acc
0.8684034736138944, F1 0.8683574194556349) are the leaderboard's splicebert-1024nt values.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from example_results import example_results

import geneb
from geneb.errors import LeaderboardError
from geneb.results.export import export_submission
from geneb.results.published import packaged_leaderboard
from geneb.results.submission import submission_from_results
from geneb.tasks.geneb_list import geneb_tasks
from geneb.vocabulary import DEFAULT_SEEDS

H3 = "InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"
META = ("display", "params", "url", "zero_shot", "training_data", "provenance", "submitted_by")


def user_rows(model: str = "my-model", drop: int = 0) -> pd.DataFrame:
    """Paper-protocol rows of one model on GENEB's 100 tasks (named by catalogue name), 3
    regimes, GENEB's five seeds; the first ``drop`` tasks left out."""
    tasks = {t.catalogue_name: (t.category, 0.002 * i - 0.1, 100)
             for i, t in enumerate(geneb_tasks()) if t.catalogue_name}
    tasks = dict(list(tasks.items())[drop:])
    df = example_results(models={model: (50_000_000, 0.5)}, tasks=tasks, seeds=DEFAULT_SEEDS,
                         Cs=(1.0,), mlp=False)
    df["protocol"] = "paper"
    return df


@pytest.fixture(scope="module")
def rows() -> pd.DataFrame:
    return user_rows()


def _hand_mean(df: pd.DataFrame, task: str, regime: str, col: str) -> float:
    g = df[(df["task"] == task) & (df["regime"] == regime)].set_index("seed")
    total = 0.0
    for s in DEFAULT_SEEDS:
        total += float(g.at[s, col])
    return total / 5


def test_export_has_genebs_shape(rows: pd.DataFrame, tmp_path: Path) -> None:
    path, doc, foreign = export_submission(rows, "my-model", tmp_path / "m.json",
                                           meta={"url": "https://example.org/m",
                                                 "submitted_by": "A Lab"})
    on_disk = json.loads(path.read_text())
    assert on_disk == doc and foreign == []
    assert list(doc) == ["schema_version", "model_id", "harness_version", "meta", "results"]
    assert doc["schema_version"] == "1.0" and doc["model_id"] == "my-model"
    assert tuple(doc["meta"]) == META
    assert doc["meta"]["params"] == 50_000_000 and doc["meta"]["provenance"] == "self-reported"
    assert doc["meta"]["zero_shot"] is False and doc["meta"]["submitted_by"] == "A Lab"
    assert set(doc["results"]) == {"full", "10shot", "1shot"}
    for per_task in doc["results"].values():
        assert list(per_task) == [t.id for t in geneb_tasks()]  # GENEB ids, GENEB's order
        assert all(set(v) == {"MCC", "Acc", "F1"} for v in per_task.values())
    assert doc["results"]["10shot"][H3]["MCC"] == _hand_mean(rows, "nt_h3", "10", "mcc")


def test_round_trip_gives_the_same_rows_back(rows: pd.DataFrame, tmp_path: Path) -> None:
    path, doc, _ = export_submission(rows, "my-model", tmp_path / "m.json")
    back = geneb.read_results(f"published:{path}")
    assert len(back) == 300
    to_name = {t.id: t.catalogue_name for t in geneb_tasks()}
    for r in back.itertuples():
        name = to_name[r.task]
        assert r.task_name == name and r.model == "my-model"
        assert r.mcc == _hand_mean(rows, name, r.regime, "mcc")
        assert r.accuracy == _hand_mean(rows, name, r.regime, "accuracy")
        assert r.macro_f1 == _hand_mean(rows, name, r.regime, "macro_f1")
        assert r.n_params == 50_000_000 and r.n_seeds == 5 and pd.isna(r.seed)
    assert set(back["protocol"]) == {"paper"} and not back["official"].any()
    assert set(back["submitted"]) == {"self-reported"}
    # and back again: the published rows export to the same file
    again, foreign = submission_from_results(back, "my-model", harness_version=doc[
        "harness_version"])
    assert again["results"] == doc["results"] and foreign == []


def test_missing_tasks_or_seeds_refused_unless_partial(tmp_path: Path) -> None:
    short = user_rows(drop=1)
    with pytest.raises(LeaderboardError, match=r"regime full: 1 of GENEB's tasks missing "
                                               r"\(first: 'InstaDeepAI_nucleotide_transformer_"
                                               r"downstream_tasks_H3'\)"):
        export_submission(short, "my-model", tmp_path / "s.json")
    assert not (tmp_path / "s.json").exists()
    seeds = user_rows()
    seeds = seeds[~((seeds["task"] == "nt_h4") & (seeds["seed"] == 42) & (seeds["regime"] == "1"))]
    with pytest.raises(LeaderboardError, match=r"regime 1shot: task '.*_H4' lacks seed\(s\) 42"):
        export_submission(seeds, "my-model", tmp_path / "s.json")
    path, doc, _ = export_submission(short, "my-model", tmp_path / "s.json", partial=True)
    assert doc["meta"]["partial"] == {"tasks": {r: [H3] for r in ("full", "10shot", "1shot")}}
    back = geneb.read_results(f"published:{path}")
    assert len(back) == 297 and H3 not in set(back["task"])
    path, doc, _ = export_submission(seeds, "my-model", tmp_path / "p.json", partial=True)
    h4 = "InstaDeepAI_nucleotide_transformer_downstream_tasks_H4"
    assert doc["meta"]["partial"] == {"seeds": {"1shot": {h4: [42]}}}


def test_only_paper_protocol_rows_are_exported(tmp_path: Path) -> None:
    conv = user_rows()
    conv["protocol"] = "converged"
    with pytest.raises(LeaderboardError, match="no rows of GENEB's protocol .*converged/linear"):
        export_submission(conv, "my-model", tmp_path / "c.json")
    with pytest.raises(LeaderboardError, match="model 'nope' is not in the results"):
        export_submission(conv, "nope", tmp_path / "c.json")
    assert not (tmp_path / "c.json").exists()


def test_genebs_own_submission_reads_as_its_published_rows(tmp_path: Path) -> None:
    """splicebert-1024nt is on GENEB's leaderboard from its submission: a file of the public
    submission's shape holding the leaderboard's values reads back as the published rows."""
    board = packaged_leaderboard()
    rec = {k: next(r for r in recs if r.model == "splicebert-1024nt")
           for k, recs in board.records.items()}
    assert rec["full"].task_mcc[0] == 0.7367776543707047  # the public submission's H3 value
    doc = {"schema_version": "1.0", "model_id": "splicebert-1024nt",
           "harness_version": "GENEB-0.1.0",
           "meta": {"display": "SpliceBERT 1024nt", "params": 19710474,
                    "url": "https://doi.org/10.5281/zenodo.7995778", "zero_shot": False,
                    "training_data": "vertebrate primary RNA", "provenance": "self-reported",
                    "submitted_by": "Ken Chen"},
           "results": {k: {t: {"MCC": v, "Acc": None, "F1": None}
                           for t, v in zip(board.task_ids, r.task_mcc, strict=True)}
                       for k, r in rec.items()}}
    doc["results"]["full"][H3].update(Acc=0.8684034736138944, F1=0.8683574194556349)
    path = tmp_path / "splicebert-1024nt.json"
    path.write_text(json.dumps(doc))
    mine = geneb.read_results(f"published:{path}")
    pub = geneb.read_results("published:geneb-9642d48")
    pub = pub[pub["model"] == "splicebert-1024nt"]
    cols = ["model", "task", "category", "regime", "mcc", "n_params", "official", "submitted"]
    pd.testing.assert_frame_equal(mine[cols].reset_index(drop=True),
                                  pub[cols].reset_index(drop=True))
    from geneb.results.published import leaderboard

    full = leaderboard(f"published:{path}").records["full"][0]
    assert (full.micro, full.macro) == (0.5545320911729502, 0.5679603646938495)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.update(schema_version="2.0"), "schema_version: expected '1.0', got '2.0'"),
    (lambda d: d["results"].update({"5shot": {}}), "unknown regime '5shot'"),
    (lambda d: d["results"]["full"].update({"not_a_task": {"MCC": 0.1}}),
     "task 'not_a_task' is not one of GENEB's tasks"),
    (lambda d: d["results"]["full"][H3].update(MCC=float("nan")), "got nan"),
    (lambda d: d["results"]["full"].pop(H3), "missing task"),
])
def test_malformed_submission_refused(rows: pd.DataFrame, tmp_path: Path, edit, message) -> None:
    doc, _ = submission_from_results(rows, "my-model")
    edit(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(LeaderboardError, match=message) as e:
        geneb.read_results(f"published:{path}")
    assert "\n" not in str(e.value)


def test_cli_export(rows: pd.DataFrame, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from geneb.cli import app
    from geneb.results import ResultsTable

    ResultsTable(tmp_path / "mine.parquet").write(rows)
    out = tmp_path / "M.json"
    args = ["results", "export", "--results", str(tmp_path / "mine.parquet"), "--format", "geneb-submission",
            "--model", "my-model", "--out", str(out), "--submitted-by", "A Lab"]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert r.output.strip() == (f"{out}: my-model, full 100 tasks, 10shot 100 tasks, "
                                "1shot 100 tasks")
    assert json.loads(out.read_text())["meta"]["submitted_by"] == "A Lab"
    short = tmp_path / "short.parquet"
    ResultsTable(short).write(user_rows(drop=2))
    base = ["results", "export", "--results", str(tmp_path / "mine.parquet"), "--out", str(tmp_path / "x")]
    for bad, message in ((["--format", "csv", "--model", "my-model"],
                          "--format: expected one of 'geneb-submission'"),
                         (["--model", "nope"],
                          "error: --model 'nope' is not in the results (it has my-model)")):
        r = CliRunner().invoke(app, [*base, *bad])
        assert r.exit_code == 2 and message in r.output, r.output
    r = CliRunner().invoke(app, ["results", "export", "--results", str(short), "--model", "my-model",
                                 "--out", str(tmp_path / "s.json")])
    assert r.exit_code == 2 and "2 of GENEB's tasks missing" in r.output, r.output
    assert len(r.output.strip().splitlines()) == 1 and not (tmp_path / "s.json").exists()
    r = CliRunner().invoke(app, ["results", "export", "--results", str(short), "--model", "my-model",
                                 "--out", str(tmp_path / "s.json"), "--partial"])
    assert r.exit_code == 0 and "98 tasks" in r.output and "partial" in r.output, r.output
