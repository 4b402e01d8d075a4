"""Task folders: real data, every input format, labels, upper-casing, fingerprints, the row cap."""

from __future__ import annotations

import csv
import hashlib
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from geneb.errors import TaskError
from geneb.protocol import UNCATEGORIZED, class_quotas, stratified_positions
from geneb.tasks.loader import load_task_folder
from geneb.tasks.sampling import name_seed
from geneb.tasks.save import save_task_folder
from geneb.tasks.spec import CATEGORIES
from geneb.tasks.synthetic import build_synthetic_task


def sha256_reference(rows: list[tuple[str, int]]) -> str:
    """The documented fingerprint, computed the obvious way."""
    h = hashlib.sha256()
    for seq, lab in rows:
        h.update(f"{seq}\t{lab}\n".encode("ascii"))
    return "sha256:" + h.hexdigest()


def read_csv_plain(path: Path) -> list[tuple[str, str]]:
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return [(r["sequence"], r["label"]) for r in reader]


def write_csv(
    path: Path, rows: list[tuple[object, object]], header: str = "sequence,label"
) -> None:
    lines = [header] + [f"{s},{lab}" for s, lab in rows]
    path.write_text("\n".join(lines) + "\n")


def small_rows(n: int = 8, seed: int = 0) -> list[tuple[str, int]]:
    rng = np.random.default_rng(seed)
    return [("".join(rng.choice(list("ACGT"), size=12)), i % 2) for i in range(n)]


def make_folder(root: Path, train=None, test=None, meta: dict | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    write_csv(root / "train.csv", train if train is not None else small_rows(8, 1))
    write_csv(root / "test.csv", test if test is not None else small_rows(6, 2))
    if meta is not None:
        (root / "task.json").write_text(json.dumps(meta))
    return root


# --------------------------------------------------------------------------- real data


def real_folders() -> list[str]:
    from conftest import DATA_DIR  # tests/ is on sys.path (rootdir conftest, no package)

    if not DATA_DIR.is_dir():
        return ["(absent)"]
    return sorted(p.name for p in DATA_DIR.iterdir() if (p / "task.json").is_file())


@pytest.mark.parametrize("folder", real_folders())
def test_real_task_folder_loads_with_task_json_counts(data_dir: Path, folder: str) -> None:
    path = data_dir / folder
    meta = json.loads((path / "task.json").read_text())
    task = load_task_folder(path)
    assert task.name == meta["name"]
    assert task.spec.category == meta["category"] and task.spec.category in CATEGORIES
    assert task.spec.n_classes == meta["n_classes"] == len(task.spec.label_names)
    assert len(task.split("train")) == meta["n_train"]
    assert len(task.split("test")) == meta["n_test"]
    assert task.spec.source == meta["source"] and task.spec.license == meta["license"]
    for split in ("train", "test"):
        data = task.split(split)
        plain = read_csv_plain(path / f"{split}.csv")
        # independent reference: csv module + hashlib, labels as written in the file
        assert data.fingerprint == sha256_reference([(s.upper(), int(lab)) for s, lab in plain])
        assert list(data.sequences) == [s.upper() for s, _ in plain]
        np.testing.assert_array_equal(data.labels, [int(lab) for _, lab in plain])
        np.testing.assert_array_equal(data.rows, np.arange(len(plain)))
        assert data.labels.dtype == np.int64 and data.rows.dtype == np.int64
        assert set(np.unique(data.labels)) <= set(range(meta["n_classes"]))
        lengths = [len(s) for s, _ in plain]
        assert task.metadata["length_range"][split] == [min(lengths), max(lengths)]
        assert not data.labels.flags.writeable
    assert set("".join(task.split("train").sequences)) <= set(meta["alphabet"])


def test_loading_a_20k_row_task_is_fast(data_dir: Path) -> None:
    load_task_folder(data_dir / "gue_tf_0")  # warm the file cache
    t0 = time.perf_counter()
    task = load_task_folder(data_dir / "gue_tf_0")
    elapsed = time.perf_counter() - t0
    assert len(task.split("train")) == 20_000
    assert elapsed < 3.0, f"loading gue_tf_0 took {elapsed:.2f} s"


# --------------------------------------------------------------------------- metadata inference


def test_metadata_inferred_without_task_json(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "my_task")
    task = load_task_folder(folder)
    assert task.name == "my_task"
    assert task.spec.category == UNCATEGORIZED
    assert task.spec.n_classes == 2 and task.spec.label_names == ("0", "1")
    assert set(task.metadata["inferred"]) == {"name", "category", "n_classes", "label_names"}
    assert task.spec.splits == ("train", "test")
    assert load_task_folder(folder, name="other").name == "other"


def test_optional_valid_split_and_extra_columns_recorded(tmp_path: Path) -> None:
    folder = make_folder(tmp_path / "t")
    write_csv(folder / "valid.csv", small_rows(4, 3))
    (folder / "test.csv").write_text("id,sequence,label\na,ACGT,0\nb,CCGG,1\n")
    task = load_task_folder(folder)
    assert task.spec.splits == ("train", "valid", "test")
    assert len(task.split("valid")) == 4
    assert task.metadata["ignored_columns"] == {"test": ["id"]}


def test_string_labels_mapped_in_sorted_order_over_all_splits(tmp_path: Path) -> None:
    train = [("ACGT", "promoter"), ("CCGG", "background"), ("TTAA", "enhancer")]
    test = [("GGCC", "enhancer"), ("ACGA", "promoter")]  # a class absent from test is fine
    folder = make_folder(tmp_path / "s", train, test)
    task = load_task_folder(folder)
    names = sorted({lab for _, lab in train + test})  # independent mapping
    assert task.spec.label_names == tuple(names)
    assert task.metadata["label_mapping"] == {n: i for i, n in enumerate(names)}
    np.testing.assert_array_equal(task.split("train").labels, [names.index(x) for _, x in train])
    np.testing.assert_array_equal(task.split("test").labels, [names.index(x) for _, x in test])
    assert task.metadata["label_type"] == "str"


def test_label_names_from_task_json_for_integer_labels(tmp_path: Path) -> None:
    meta = {"name": "t", "category": "promoters", "label_names": ["no", "yes"], "n_classes": 2}
    task = load_task_folder(make_folder(tmp_path / "t", meta=meta))
    assert task.spec.label_names == ("no", "yes")
    assert task.spec.category == "promoters"


def test_lower_case_is_upper_cased_and_counted(tmp_path: Path) -> None:
    train = [("acgt", 0), ("ACGT", 1), ("AcGn", 0), ("TTTT", 1)]
    folder = make_folder(tmp_path / "l", train)
    task = load_task_folder(folder)
    assert task.split("train").sequences == ("ACGT", "ACGT", "ACGN", "TTTT")
    assert task.metadata["uppercased"] == {"train": 2, "test": 0}
    upper = make_folder(tmp_path / "u", [(s.upper(), lab) for s, lab in train])
    assert load_task_folder(upper).split("train").fingerprint == task.split("train").fingerprint


def test_iupac_codes_are_accepted(tmp_path: Path) -> None:
    train = [("ACGTNRYSWKMBDHV", 0), ("acgtnryswkmbdhv", 1)]
    task = load_task_folder(make_folder(tmp_path / "i", train))
    assert task.split("train").sequences == ("ACGTNRYSWKMBDHV",) * 2


def test_fingerprint_changes_when_one_base_changes(tmp_path: Path) -> None:
    rows = small_rows(8, 5)
    a = load_task_folder(make_folder(tmp_path / "a", rows))
    seq = rows[3][0]
    changed = list(rows)
    changed[3] = (seq[:5] + ("A" if seq[5] != "A" else "C") + seq[6:], rows[3][1])
    b = load_task_folder(make_folder(tmp_path / "b", changed))
    assert a.split("train").fingerprint != b.split("train").fingerprint
    assert a.split("test").fingerprint == b.split("test").fingerprint
    relabelled = list(rows)
    relabelled[3] = (rows[3][0], 1 - rows[3][1])
    c = load_task_folder(make_folder(tmp_path / "c", relabelled))
    assert c.split("train").fingerprint != a.split("train").fingerprint


# --------------------------------------------------------------------------- other formats


def test_parquet_and_fasta_round_trip_give_the_csv_fingerprints(tmp_path: Path) -> None:
    task = build_synthetic_task("syn_splice_sites", n_train=60, n_test=30)
    ref = {s: d.fingerprint for s, d in task.splits.items()}
    for fmt in ("csv", "parquet", "fasta"):
        loaded = load_task_folder(save_task_folder(task, tmp_path / fmt, fmt=fmt))
        assert loaded.fingerprints() == ref, fmt
        assert loaded.spec.label_names == task.spec.label_names
        assert loaded.spec.category == task.spec.category and loaded.spec.synthetic
        assert loaded.metadata["formats"]["train"] == fmt


def test_fasta_per_class_directory(tmp_path: Path) -> None:
    task = build_synthetic_task("syn_species_markov", n_train=30, n_test=12)
    folder = save_task_folder(task, tmp_path / "pc", fmt="fasta-per-class")
    loaded = load_task_folder(folder)
    for split, data in task.splits.items():
        order = np.argsort(data.labels, kind="stable")  # files 0.fa, 1.fa, 2.fa in turn
        expected = [(data.sequences[i], int(data.labels[i])) for i in order]
        assert loaded.split(split).fingerprint == sha256_reference(expected)


def test_fasta_header_conventions_and_multiline_records(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "train.fasta").write_text(
        ">r1 label=enh some description\nACGT\nacgt\n\n>r2|bg\nCCCC\n>r3 x label=enh\nGG\n"
    )
    (folder / "test.fa").write_text(">a|enh\nAAAA\n>b|bg\nTTTT\n")
    task = load_task_folder(folder)
    assert task.spec.label_names == ("bg", "enh")
    assert task.split("train").sequences == ("ACGTACGT", "CCCC", "GG")
    np.testing.assert_array_equal(task.split("train").labels, [1, 0, 1])
    assert task.metadata["uppercased"]["train"] == 1


def test_per_class_fasta_with_named_files(tmp_path: Path) -> None:
    folder = tmp_path / "n"
    for split in ("train", "test"):
        (folder / split).mkdir(parents=True)
        (folder / split / "promoter.fa").write_text(">p1\nTATAAA\n>p2\nTATATA\n")
        (folder / split / "background.fasta").write_text(">b1\nGGGCCC\n")
    task = load_task_folder(folder)
    assert task.spec.label_names == ("background", "promoter")
    np.testing.assert_array_equal(task.split("train").labels, [0, 1, 1])
    np.testing.assert_array_equal(task.split("train").rows, [0, 1, 2])


def test_parquet_with_string_labels(tmp_path: Path) -> None:
    folder = tmp_path / "p"
    folder.mkdir()
    pd.DataFrame({"sequence": ["ACGT", "GGGG", "TTTT"], "label": ["b", "a", "b"]}).to_parquet(
        folder / "train.parquet"
    )
    pd.DataFrame({"sequence": ["CCCC", "AAAA"], "label": ["a", "b"]}).to_parquet(
        folder / "test.parquet"
    )
    task = load_task_folder(folder)
    np.testing.assert_array_equal(task.split("train").labels, [1, 0, 1])


# --------------------------------------------------------------------------- subsampling


def test_train_split_over_the_cap_is_stratified_deterministic_and_recorded(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    labels = np.repeat([0, 1, 2], [600, 300, 100])
    rng.shuffle(labels)
    train = [("".join(rng.choice(list("ACGT"), size=10)), int(lab)) for lab in labels]
    folder = make_folder(tmp_path / "big", train, small_rows(6, 9))
    task = load_task_folder(folder, train_row_cap=100)
    data = task.split("train")
    assert len(data) == 100
    counts = np.bincount(data.labels, minlength=3)
    assert counts.tolist() == [60, 30, 10]  # proportional: 100 * (600, 300, 100) / 1000
    # rows point at the original file rows, in file order
    assert np.all(np.diff(data.rows) > 0)
    for seq, lab, row in zip(data.sequences, data.labels, data.rows, strict=True):
        assert (seq, int(lab)) == train[row]
    rec = task.metadata["subsampled"]["train"]
    assert rec["original_rows"] == 1000 and rec["kept_rows"] == 100 and rec["cap"] == 100
    assert rec["seed"] == name_seed("big") and "stratified" in rec["method"]
    assert task.metadata["n_rows"]["train"] == 100
    again = load_task_folder(folder, train_row_cap=100)
    np.testing.assert_array_equal(again.split("train").rows, data.rows)
    assert again.split("train").fingerprint == data.fingerprint
    renamed = load_task_folder(folder, name="big2", train_row_cap=100)
    assert not np.array_equal(renamed.split("train").rows, data.rows)
    assert len(task.split("test")) == 6  # test is never capped
    uncapped = load_task_folder(folder, train_row_cap=None)
    assert len(uncapped.split("train")) == 1000 and uncapped.metadata["subsampled"] == {}


@pytest.mark.parametrize("seed", range(30))
def test_class_quotas_against_exact_proportions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 500, size=rng.integers(2, 6))
    cap = int(rng.integers(counts.size, counts.sum()))
    q = class_quotas(counts, cap)
    exact = counts * cap / counts.sum()
    assert q.sum() == cap
    assert np.all(q >= 1) and np.all(q <= counts)
    assert np.all(np.abs(q - exact) < 1.0 + 1e-9) or np.any(exact < 1)


def _subsample(labels: np.ndarray, cap: int, seed: int) -> np.ndarray:
    return stratified_positions(labels, np.arange(labels.size), cap=cap, n_classes=4,
                                rng=np.random.default_rng(seed))


def test_stratified_subsample_keeps_distinct_sorted_rows() -> None:
    labels = np.random.default_rng(3).integers(0, 4, size=5000)
    idx = _subsample(labels, 700, seed=11)
    assert idx.size == 700 and np.unique(idx).size == 700 and np.all(np.diff(idx) > 0)
    np.testing.assert_array_equal(idx, _subsample(labels, 700, seed=11))
    assert not np.array_equal(idx, _subsample(labels, 700, seed=12))


def test_bad_folder_path_is_a_task_error(tmp_path: Path) -> None:
    with pytest.raises(TaskError, match="not found"):
        load_task_folder(tmp_path / "nope")


def test_a_cap_below_the_number_of_classes_is_refused(tmp_path: Path) -> None:
    train = [(s, i % 3) for i, (s, _) in enumerate(small_rows(9, 4))]
    folder = make_folder(tmp_path / "three", train, [("ACGT", 0), ("CCGG", 1), ("GGGA", 2)])
    with pytest.raises(TaskError, match="below the number of classes"):
        load_task_folder(folder, train_row_cap=2)
    capped = load_task_folder(folder, train_row_cap=3).split("train")
    assert np.bincount(capped.labels).tolist() == [1, 1, 1]
