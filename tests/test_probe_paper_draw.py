"""``--protocol paper`` draws GENEB's k-shot rows: cell by cell equal to an independent run of
GENEB's drawing and fitting code, written here from its facts (darlednik/GENEB
``embedding_pipeline/pipeline/classification.py`` @ 17be5b07), on held-out task folders built
in tmp from real sequences of ../shared/data: string labels, integer labels that are not
0..K-1 (with class ids that do not sort like them), a class with fewer than k train rows.

The reference reads the task as GENEB's ``main.py`` does (one CSV, columns text/label/split,
``pandas.read_csv``) and takes the features from the store in file order (the fit is what is
compared, not the model)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from conftest import DATA_DIR, require_shared
from probe_stores import gaussian_task, write_entry
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import matthews_corrcoef

from geneb.errors import ProbeError
from geneb.extract.runner import extract
from geneb.probe.engine import run_probes
from geneb.probe.plan import Done, inspect_pair, plan_pair, versions
from geneb.results.table import ResultsTable, read_results, rows_to_table
from geneb.store import FeatureStore
from geneb.tasks.loader import load_task_folder
from geneb.tasks.spec import Task

SEEDS = (13, 17, 42, 123, 997)
SOURCE = "gue_splice_reconstructed"  # 3 classes, real sequences


def _held_out(tmp_path, names: dict[int, object], small_class: int, n_small: int = 4):
    """A task folder (geneb's train/test csv) and GENEB's one-file csv of the same rows:
    30 train rows per class (``n_small`` of ``small_class``), 20 test rows per class, rows
    shuffled so labels appear in no sorted order; labels renamed by ``names``."""
    src = require_shared(DATA_DIR / SOURCE, "real task data")
    rng = np.random.default_rng(5)
    parts = {}
    for split, n in (("train", 30), ("test", 20)):
        df = pd.read_csv(src / f"{split}.csv")
        take = [df[df.label == c].head(n_small if split == "train" and c == small_class else n)
                for c in sorted(names)]
        d = pd.concat(take).sample(frac=1.0, random_state=int(rng.integers(1 << 30)))
        parts[split] = d.assign(label=d.label.map(names)).reset_index(drop=True)
    folder = tmp_path / "task"
    folder.mkdir()
    for split, d in parts.items():
        d[["sequence", "label"]].to_csv(folder / f"{split}.csv", index=False)
    geneb_csv = tmp_path / "geneb_task.csv"
    both = pd.concat([d.assign(split=s) for s, d in parts.items()])
    both.rename(columns={"sequence": "text"})[["text", "label", "split"]].to_csv(
        geneb_csv, index=False)
    return folder, geneb_csv


def _geneb_reference(geneb_csv, X_train, X_test, shots):
    """GENEB's evaluate_from_csv, re-written from its facts: {(k, seed): (rows, mcc)}, and
    the full regime's five MCCs."""
    records = pd.read_csv(geneb_csv).to_dict(orient="records")
    train = [x for x in records if x["split"] == "train"]
    test = [x for x in records if x["split"] == "test"]
    y_train = np.array([x["label"] for x in train])
    y_test = np.array([x["label"] for x in test])
    full = [matthews_corrcoef(y_test, LogisticRegression(max_iter=1000, random_state=seed)
                              .fit(X_train, y_train).predict(X_test)) for seed in SEEDS]
    out = {}
    for k in shots:
        for seed in SEEDS:
            rng = np.random.RandomState(seed)
            picks = []
            for cls in np.unique(y_train):
                locs = np.where(y_train == cls)[0]
                picks.append(rng.choice(locs, size=min(k, len(locs)), replace=False))
            idxs = np.concatenate(picks)
            clf = LogisticRegression(max_iter=1000).fit(X_train[idxs], y_train[idxs])
            out[(k, seed)] = (idxs.tolist(), matthews_corrcoef(y_test, clf.predict(X_test)))
    return out, full


def _probe_and_compare(tmp_path, task: Task, geneb_csv, small_class_rows: int):
    store = tmp_path / "store"
    extract(str(store), "kmer-3", [task])
    out = tmp_path / "results"
    s = run_probes(store, out, shots="1,10,full", seeds=SEEDS, protocol="paper", workers=1)
    df = read_results(out)
    fs = FeatureStore(store, "r")
    tr, te = fs.get("kmer-3", task.spec.name, "train"), fs.get("kmer-3", task.spec.name, "test")
    assert np.array_equal(tr.rows, np.arange(len(tr.rows)))  # entry order = file order
    ref, full = _geneb_reference(geneb_csv, tr.embeddings, te.embeddings, (1, 10))
    kshot = df[df.regime != "full"]
    assert len(kshot) == 2 * len(SEEDS)
    for row in kshot.itertuples():
        rows, mcc = ref[(int(row.k), int(row.seed))]
        assert list(row.train_rows) == rows, (row.k, row.seed)  # same rows, same order
        assert abs(row.mcc - mcc) <= 1e-12, (row.k, row.seed, row.mcc, mcc)
        assert row.n_train == len(rows)
        assert bool(row.take_all) == (row.k == 10)  # the small class gave all its rows
    assert (kshot[kshot.k == 10].n_train == 2 * 10 + small_class_rows).all()
    fr = df[df.regime == "full"]
    assert sorted(fr.seed) == sorted(SEEDS)
    assert np.allclose(fr.mcc, full[0], rtol=0, atol=1e-12) and np.ptp(full) == 0
    # the full regime is ONE fit recorded for the five seeds, never five fits
    distinct = {tuple(r) for r in kshot.train_rows}
    assert s.n_fits == len(distinct) + 1
    return df


def test_string_labels_and_a_small_class_match_geneb(tmp_path):
    names = {0: "intron", 1: "donor", 2: "acceptor"}  # file order of appearance: shuffled
    folder, geneb_csv = _held_out(tmp_path, names, small_class=0)
    task = load_task_folder(folder)
    assert task.spec.label_names == ("acceptor", "donor", "intron")
    _probe_and_compare(tmp_path, task, geneb_csv, small_class_rows=4)


def test_integer_labels_not_0_to_k_and_ids_sorted_otherwise_match_geneb(tmp_path):
    """Labels 3, 7, 12 whose class ids were given in text order (12, 3, 7): GENEB sorts the
    VALUES (3 < 7 < 12), so a draw over class ids would pick other rows."""
    values = {0: 12, 1: 3, 2: 7}  # class id -> label value
    folder, geneb_csv = _held_out(tmp_path, values, small_class=2)
    ids_folder = tmp_path / "ids"
    ids_folder.mkdir()
    inverse = {v: k for k, v in values.items()}
    for split in ("train", "test"):  # the same rows holding their class ids
        d = pd.read_csv(folder / f"{split}.csv")
        d.assign(label=d.label.map(inverse)).to_csv(ids_folder / f"{split}.csv", index=False)
    loaded = load_task_folder(ids_folder, name="ints")
    task = Task(dataclasses.replace(loaded.spec, label_names=("12", "3", "7")), loaded.splits,
                {**loaded.metadata, "label_type": "int",
                 "label_mapping": {str(v): k for k, v in values.items()}})
    _probe_and_compare(tmp_path, task, geneb_csv, small_class_rows=4)


def test_old_entry_without_label_values_is_refused_in_one_line(tmp_path):
    fs = FeatureStore(tmp_path / "s", "a")
    gaussian_task(fs, "m", "bin", n_train=40, n_test=20, dim=4)
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 10)
    write_entry(fs, "m", "old", "train", rng.normal(size=(20, 4)), y, label_values=None)
    write_entry(fs, "m", "old", "test", rng.normal(size=(20, 4)), y, label_values=None)
    with pytest.raises(ProbeError) as e:
        run_probes(fs.path, tmp_path / "r", tasks=["old"], protocol="paper", workers=1)
    msg = str(e.value)
    assert "\n" not in msg and "m/old/train" in msg and "label values" in msg
    assert not (tmp_path / "r").exists() or not read_results(tmp_path / "r").shape[0]
    run_probes(fs.path, tmp_path / "r2", tasks=["old"], workers=1)  # converged: geneb's draw


def test_capped_train_split_is_refused_for_the_paper_draw(tmp_path):
    fs = FeatureStore(tmp_path / "s", "a")
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 10)
    write_entry(fs, "m", "cap", "train", rng.normal(size=(20, 4)), y, source_rows=50)
    write_entry(fs, "m", "cap", "test", rng.normal(size=(20, 4)), y)
    with pytest.raises(ProbeError, match=r"holds 20 of the task file's 50 train rows"):
        run_probes(fs.path, tmp_path / "r", protocol="paper", workers=1)


def test_paper_cells_drawn_by_geneb_draw_before_are_recomputed(tmp_path):
    """A results table whose paper k-shot cell holds other rows (geneb's draw, as an older
    geneb drew paper cells): the cell is planned again with GENEB's rows, not kept."""
    fs = FeatureStore(tmp_path / "s", "a")
    gaussian_task(fs, "m", "bin", n_train=40, n_test=20, dim=4)
    out = tmp_path / "r"
    run_probes(fs.path, out, shots="1", seeds=(13,), protocol="paper", workers=1)
    again = run_probes(fs.path, out, shots="1", seeds=(13,), protocol="paper", workers=1)
    assert again.n_computed == 0 and again.n_skipped == 1  # the same draw: kept
    rows = ResultsTable(out).read().to_pylist()
    kw = dict(shots=("1",), seeds=(13,), Cs=(1.0,), probe="linear", backend_name="sklearn",
              protocol_name="paper", standardize=False, take_all=False, versions=versions(),
              created="now")
    pair = inspect_pair(fs, "m", "bin")
    plan_pair(pair, done=Done.of(rows_to_table(rows)), **kw)
    assert not pair.cells  # GENEB's rows already there: nothing to do
    rows[0]["train_rows"] = sorted(rows[0]["train_rows"])[::-1] + [0]  # other rows
    pair = inspect_pair(fs, "m", "bin")
    plan_pair(pair, done=Done.of(rows_to_table(rows)), **kw)
    assert len(pair.cells) == 1


@pytest.mark.parametrize("names", [{0: 12, 1: 3, 2: 7}, {0: "intron", 1: "donor", 2: "acceptor"}])
def test_geneb_task_file_end_to_end_matches_geneb(tmp_path, names):
    """GENEB's own task file (one CSV: text, label, split) read by geneb's loader, extracted
    and probed under the paper protocol: every cell equals GENEB's code re-written above, with
    labels 3/7/12 (class ids in text order would sort 12 < 3 < 7) or strings, and a class of
    4 train rows (fewer than k = 10)."""
    from geneb.tasks.geneb_csv import load_geneb_csv

    _, geneb_csv = _held_out(tmp_path, names, small_class=2)
    task = load_geneb_csv(geneb_csv)
    assert list(task.spec.label_names) == [str(v) for v in sorted(names.values())]
    _probe_and_compare(tmp_path, task, geneb_csv, small_class_rows=4)
    fs = FeatureStore(tmp_path / "store", "r")
    prov = fs.provenance(fs.get("kmer-3", task.spec.name, "train").key)
    assert prov.extra["label_values"] == sorted(names.values())  # the file's own values
