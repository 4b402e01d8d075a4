"""Issue 15: a class seen only outside train, or a misspelt per-class FASTA file, is refused.

Before the fix, train labels {0,1} with test labels {0,2} loaded as a 3-class task and a
misspelt ``test/backgroud.fa`` added a third class; both were extracted and scored.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import GenebError, TaskError
from geneb.tasks.loader import load_task_folder
from geneb.tasks.validate import near_duplicate

SEQS = ["ACGT", "CCGG", "TTAA", "GGCA", "ACGA", "CCGA"]


def write_csv(path: Path, labels: list[object]) -> None:
    rows = [f"{SEQS[i % len(SEQS)]},{lab}" for i, lab in enumerate(labels)]
    path.write_text("sequence,label\n" + "\n".join(rows) + "\n")


def write_class_dir(folder: Path, classes: list[str]) -> None:
    folder.mkdir(parents=True)
    for k, name in enumerate(classes):
        (folder / f"{name}.fa").write_text(f">r{k}a\n{SEQS[k]}\n>r{k}b\n{SEQS[k + 1]}\n")


def refused(folder: Path) -> str:
    with pytest.raises(TaskError) as info:
        load_task_folder(folder)
    result = CliRunner().invoke(app, ["tasks", "show", str(folder)])
    assert result.exit_code == 2, result.output
    assert "error:" in result.output and "Traceback" not in result.output
    assert not isinstance(result.exception, GenebError)
    return str(info.value)


def test_test_label_absent_from_train_is_refused(tmp_path: Path) -> None:
    write_csv(tmp_path / "train.csv", [0, 1, 0, 1])
    write_csv(tmp_path / "test.csv", [0, 2, 0, 2])
    msg = refused(tmp_path)
    assert "test.csv row 2 (line 3)" in msg
    assert "label '2'" in msg and "'test'" in msg
    assert "never occurs in the train split" in msg and "train.csv" in msg
    assert "(2 rows have this problem)" in msg


def test_valid_label_absent_from_train_is_refused(tmp_path: Path) -> None:
    write_csv(tmp_path / "train.csv", ["a", "b", "a", "b"])
    write_csv(tmp_path / "valid.csv", ["a", "c"])
    write_csv(tmp_path / "test.csv", ["a", "b"])
    msg = refused(tmp_path)
    assert "valid.csv row 2" in msg and "label 'c'" in msg and "'valid'" in msg


def test_misspelt_string_label_names_the_near_duplicate(tmp_path: Path) -> None:
    write_csv(tmp_path / "train.csv", ["background", "promoter"] * 2)
    write_csv(tmp_path / "test.csv", ["backgroud", "promoter"])
    msg = refused(tmp_path)
    assert "label 'backgroud'" in msg and "misspelling of 'background'" in msg


def test_per_class_fasta_misspelt_file_between_splits(tmp_path: Path) -> None:
    write_class_dir(tmp_path / "train", ["background", "promoter"])
    write_class_dir(tmp_path / "test", ["backgroud", "promoter"])
    msg = refused(tmp_path)
    assert str(tmp_path / "test" / "backgroud.fa") in msg
    assert str(tmp_path / "train" / "background.fa") in msg
    assert "misspelling" in msg


def test_per_class_fasta_near_duplicates_within_a_split(tmp_path: Path) -> None:
    write_class_dir(tmp_path / "train", ["background", "promoter", "promotor"])
    write_class_dir(tmp_path / "test", ["background", "promoter", "promotor"])
    msg = refused(tmp_path)
    assert "'promoter' and 'promotor'" in msg
    assert str(tmp_path / "train" / "promoter.fa") in msg


def test_per_class_fasta_class_sets_must_match(tmp_path: Path) -> None:
    write_class_dir(tmp_path / "train", ["enhancer", "promoter", "silencer"])
    write_class_dir(tmp_path / "test", ["enhancer", "promoter"])
    msg = refused(tmp_path)
    assert "hold different classes" in msg
    assert "missing from 'test'" in msg and str(tmp_path / "train" / "silencer.fa") in msg


@pytest.mark.parametrize(
    ("classes"),
    [["class_a", "class_b"], ["H3K4me1", "H3K4me2"], ["0", "1"], ["enhancer", "promoter"]],
)
def test_enumerated_class_names_still_load(tmp_path: Path, classes: list[str]) -> None:
    write_class_dir(tmp_path / "train", classes)
    write_class_dir(tmp_path / "test", classes)
    task = load_task_folder(tmp_path)
    assert task.spec.label_names == tuple(sorted(classes))


def test_train_class_missing_from_a_csv_test_split_is_allowed(tmp_path: Path) -> None:
    """Scoring is defined when test lacks a trained class (a small test set can)."""
    write_csv(tmp_path / "train.csv", [0, 1, 2, 0, 1, 2])
    write_csv(tmp_path / "test.csv", [0, 1])
    assert load_task_folder(tmp_path).spec.n_classes == 3


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("background", "backgroud", True),
        ("promoter", "promotor", True),
        ("Promoter", "promoter", True),
        ("promoter", "promoters", True),
        ("tata_box", "tata-box", True),
        ("class_a", "class_b", False),
        ("H3K4me1", "H3K4me2", False),
        ("0", "1", False),
        ("exon", "exan", False),  # too short to judge
        ("virus", "phage", False),
        ("enhancer", "enhancer", False),
    ],
)
def test_near_duplicate_rules(a: str, b: str, expected: bool) -> None:
    assert near_duplicate(a, b) is expected
    assert near_duplicate(b, a) is expected
