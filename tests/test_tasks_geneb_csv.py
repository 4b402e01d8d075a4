"""GENEB's task files and task ids (issue 33, item 2) and a task's catalogue match (issue 28,
case 29).

A GENEB task file is built here with pandas from a real staged task (columns text, label,
split, as GENEB's ``load_csv_dataset`` requires); what GENEB's pipeline would see is computed
here the way its code does (``df[df.split == 'train']`` in file order, classes in
``np.unique`` order), never with geneb.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import TaskError, UnknownNameError
from geneb.tasks.aliases import alias_map, catalogue_name_for, study_names
from geneb.tasks.catalogue import load_task_catalogue
from geneb.tasks.folders import resolve_task, task_summaries
from geneb.tasks.geneb_list import geneb_tasks
from geneb.tasks.matching import catalogue_match

MOUSE = "leannmlindsey_GUE_mouse_0"


def _geneb_frame(folder: Path, relabel: dict | None = None) -> pd.DataFrame:
    """A staged task as one GENEB table: train rows, then test rows, interleaved a little."""
    tr = pd.read_csv(folder / "train.csv").assign(split="train")
    te = pd.read_csv(folder / "test.csv").assign(split="test")
    df = pd.concat([tr.iloc[:300], te.iloc[:40], tr.iloc[300:400], te.iloc[40:60]])
    df = df.rename(columns={"sequence": "text"})[["text", "label", "split"]]
    if relabel is not None:
        df["label"] = df["label"].map(relabel)
    return df.reset_index(drop=True)


def _write(df: pd.DataFrame, path: Path) -> Path:
    df.to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    "relabel", [None, {0: 7, 1: -3}, {0: "promoter", 1: "background"}],
    ids=["ids", "ints_not_0_to_k", "strings"],
)
def test_a_geneb_file_loads_as_genebs_pipeline_reads_it(
    data_dir: Path, tmp_path: Path, relabel: dict | None
) -> None:
    df = _geneb_frame(data_dir / "gue_prom_300_tata", relabel)
    path = _write(df, tmp_path / "InstaDeepAI_nucleotide_transformer_downstream_tasks_H3.csv")
    task = resolve_task(str(path))
    assert task.name == path.stem and task.spec.category == "histone_modifications"
    back = pd.read_csv(path)  # GENEB: pd.read_csv, then the rows of each split in file order
    for split in ("train", "test"):
        rows = back[back["split"] == split]
        got = task.splits[split]
        assert list(got.sequences) == rows["text"].str.upper().tolist()
        assert got.rows.tolist() == list(range(len(rows)))
        assert task.metadata["file_rows"][split] == rows.index.tolist()
        classes = np.unique(back.loc[back["split"] == "train", "label"].to_numpy())
        want = np.searchsorted(classes, rows["label"].to_numpy())  # GENEB's class order
        assert got.labels.tolist() == want.tolist()
        assert [task.spec.label_names[k] for k in got.labels] == rows["label"].astype(str).tolist()
    assert task.metadata["catalogue_name"] == "nt_h3"


def test_bad_rows_name_the_file_row(data_dir: Path, tmp_path: Path) -> None:
    df = _geneb_frame(data_dir / "gue_prom_300_tata")
    bad = df.copy()
    bad.loc[310, "split"] = "dev"  # GENEB would drop it silently
    with pytest.raises(TaskError, match=r"x\.csv row 311 \(line 312\): split must be 'train' or "
                                        r"'test' .*got 'dev'"):  # fmt: skip
        resolve_task(str(_write(bad, tmp_path / "x.csv")))
    bad = df.copy()
    bad.loc[320, "text"] = "ACGTXACGT"  # a test row: named by its row in the file
    with pytest.raises(TaskError, match=r"y\.csv row 321 \(line 322\): invalid character 'X'"):
        resolve_task(str(_write(bad, tmp_path / "y.csv")))
    with pytest.raises(TaskError, match=r"missing column\(s\) 'split'; a GENEB task file"):
        resolve_task(str(_write(df.drop(columns="split"), tmp_path / "z.csv")))
    with pytest.raises(TaskError, match="is a file but not a GENEB task file"):
        resolve_task(str(_write(df.drop(columns="split"), tmp_path / "z.txt")))
    only_train = df[df["split"] == "train"]
    with pytest.raises(TaskError, match="no row has split 'test'"):
        resolve_task(str(_write(only_train, tmp_path / "w.csv")))
    bad = df.copy()
    bad.loc[5, "label"] = 3  # a test-only class is refused, as in a folder
    bad.loc[5, "split"] = "test"
    with pytest.raises(TaskError, match=r"v\.csv row 6 \(line 7\): label '3' of split 'test' "
                                        "never occurs in the train split"):  # fmt: skip
        resolve_task(str(_write(bad, tmp_path / "v.csv")))


def test_a_collection_is_a_data_dir_of_tasks(data_dir: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENEB_CACHE", str(tmp_path / "cache"))
    coll = tmp_path / "GENEB_data"
    coll.mkdir()
    _write(_geneb_frame(data_dir / "gue_mouse_0"), coll / f"{MOUSE}.csv")
    prom = "leannmlindsey_GUE_prom_300_tata"
    _write(_geneb_frame(data_dir / "gue_prom_300_tata"), coll / f"{prom}.csv")
    names = [s.name for s in task_summaries(coll) if not s.name.startswith("syn_")]
    assert names == [MOUSE, prom]
    task = resolve_task(MOUSE, str(coll))  # the file of that id wins over the alias
    assert task.name == MOUSE and task.spec.category == "mouse_enhancers"
    assert task.metadata["geneb_id"] == MOUSE and task.metadata["catalogue_name"] == "gue_mouse_0"
    with pytest.raises(TaskError, match="is a collection of 2 GENEB task files"):
        resolve_task(str(coll))
    r = CliRunner().invoke(app, ["tasks", "list", "--data-dir", str(coll)])
    assert r.exit_code == 0 and MOUSE in r.output


def test_geneb_ids_resolve_to_staged_folders_that_are_that_task(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GENEB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("GENEB_DATA_DIR", str(data_dir))
    task = resolve_task(MOUSE)  # -> catalogue gue_mouse_0 -> the staged folder
    assert task.name == "gue_mouse_0" and Path(str(task.spec.path)).name == "gue_mouse_0"
    # the staged gue_emp_h3 holds 1,497 train rows, GUE's emp_H3 11,971: not GENEB's task
    with pytest.raises(TaskError, match=r"'leannmlindsey_GUE_emp_H3' is GENEB's name for "
                                        r"catalogue task 'gue_emp_h3', but .* is not that task.*"
                                        r"train 1,497 \(catalogue 11,971\)"):  # fmt: skip
        resolve_task("leannmlindsey_GUE_emp_H3")
    # no folder of that name (the staged gue_tf_0 is another task): say how to fetch it
    with pytest.raises(UnknownNameError, match="run: geneb tasks fetch gue_human_tf_0"):
        resolve_task("leannmlindsey_GUE_human_tf_0")
    r = CliRunner().invoke(app, ["tasks", "show", MOUSE])
    assert r.exit_code == 0 and "catalogue entry: gue_mouse_0 (by size)" in r.output


def test_a_task_says_which_catalogue_entry_it_is(data_dir: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENEB_CACHE", str(tmp_path / "cache"))
    tf0 = catalogue_match(resolve_task(str(data_dir / "gue_tf_0")))
    assert tf0["entry"] is None and tf0["detail"].startswith("matches no catalogue entry")
    assert "gue_human_tf_0: train 20,000 (catalogue 32,378)" in tf0["detail"]
    mouse = catalogue_match(resolve_task(str(data_dir / "gue_mouse_0")))
    assert (mouse["entry"], mouse["by"]) == ("gue_mouse_0", "size")
    # a copy under another name is found by its sizes
    renamed = tmp_path / "my_mouse"
    renamed.mkdir()
    for f in ("train.csv", "test.csv"):
        (renamed / f).write_bytes((data_dir / "gue_mouse_0" / f).read_bytes())
    assert catalogue_match(resolve_task(str(renamed)))["entry"] == "gue_mouse_0"
    r = CliRunner().invoke(app, ["tasks", "show", str(data_dir / "gue_tf_0"), "--json"])
    assert r.exit_code == 0 and '"entry": null' in r.output and "32,378" in r.output


def test_every_geneb_id_is_an_alias_of_a_catalogue_task() -> None:
    names = {e.name for e in load_task_catalogue()}
    ids = [t.id for t in geneb_tasks()]
    assert len(ids) == 100 and all(catalogue_name_for(i) in names for i in ids)
    assert len(set(study_names("GENEB"))) == 100
    assert alias_map()[MOUSE] == ("gue_mouse_0", "GENEB")
    assert catalogue_name_for("gue_mouse_0") is None  # a catalogue name is no alias
    assert all(study == "GENEB" for _, study in alias_map().values())


def test_a_plan_collection_of_geneb_files_names_each_file(data_dir: Path, tmp_path: Path) -> None:
    from geneb.pipeline.plan import load_plan

    coll = tmp_path / "GENEB_data"
    coll.mkdir()
    for gid, staged in ((MOUSE, "gue_mouse_0"), ("iDHS-EL_DNase_I", "dhs_idhs_fflg")):
        _write(_geneb_frame(data_dir / staged), coll / f"{gid}.csv")
    (coll / "notes.csv").write_text("a,b\n1,2\n")  # not a GENEB task file: not a task
    plan = tmp_path / "plan.toml"
    plan.write_text('store = "s.zarr"\nout = "out"\n[[models]]\nmodel = "kmer-2"\n'
                    '[tasks]\ncollections = ["GENEB_data"]\n')  # fmt: skip
    tasks = load_plan(plan).tasks
    assert [Path(t).name for t in tasks] == ["iDHS-EL_DNase_I.csv", f"{MOUSE}.csv"]
    assert [resolve_task(t).name for t in tasks] == ["iDHS-EL_DNase_I", MOUSE]
