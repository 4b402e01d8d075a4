"""A corpus of broken task folders: each gives its own error naming file, row and value.

Each case is checked twice: through ``load_task_folder`` (a ``TaskError`` whose message holds
the expected fragments) and through ``geneb tasks show`` (exit code 2, ``error:``, no traceback).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import GenebError, TaskError
from geneb.tasks.loader import load_task_folder

GOOD_TRAIN = "sequence,label\nACGT,0\nCCGG,1\nTTAA,0\nGGCA,1\n"
GOOD_TEST = "sequence,label\nACGA,0\nCCGA,1\n"


def csv_folder(train: str = GOOD_TRAIN, test: str = GOOD_TEST, meta: dict | None = None):
    def build(folder: Path) -> None:
        (folder / "train.csv").write_text(train)
        (folder / "test.csv").write_text(test)
        if meta is not None:
            (folder / "task.json").write_text(json.dumps(meta))

    return build


def parquet_folder(train: pd.DataFrame):
    def build(folder: Path) -> None:
        train.to_parquet(folder / "train.parquet")
        (folder / "test.csv").write_text(GOOD_TEST)

    return build


def fasta_folder(train: str):
    def build(folder: Path) -> None:
        (folder / "train.fa").write_text(train)
        (folder / "test.csv").write_text(GOOD_TEST)

    return build


def extra_file(name: str, text: str, base=None):
    base = base or csv_folder()

    def build(folder: Path) -> None:
        base(folder)
        (folder / name).write_text(text)

    return build


def without(name: str):
    def build(folder: Path) -> None:
        csv_folder()(folder)
        (folder / name).unlink()

    return build


# (id, builder, fragments the message must contain)
CASES: list[tuple[str, Callable[[Path], None], list[str]]] = [
    (
        "invalid-character",
        csv_folder(train="sequence,label\nACGT,0\nCCGG,1\nACXT,0\nGGCA,1\n"),
        ["train.csv row 3 (line 4)", "invalid character 'X'", "position 3", "'ACXT'"],
    ),
    (
        "rna-base-lower-case",
        csv_folder(train="sequence,label\nACGT,0\nccgu,1\nTTAA,0\nGGCA,1\n"),
        ["train.csv row 2 (line 3)", "invalid character 'u'"],
    ),
    (
        "non-ascii-character",
        csv_folder(test="sequence,label\nACGA,0\nCCÉA,1\n"),
        ["test.csv row 2 (line 3)", "invalid character 'É'"],
    ),
    (
        "space-inside-sequence",
        csv_folder(train="sequence,label\nACGT,0\nCC GG,1\nTTAA,0\nGGCA,1\n"),
        ["train.csv row 2", "invalid character ' '"],
    ),
    (
        "empty-sequence",
        csv_folder(train="sequence,label\nACGT,0\n,1\nTTAA,0\n,1\n"),
        ["train.csv row 2 (line 3)", "empty sequence", "2 rows have this problem"],
    ),
    (
        "missing-column",
        csv_folder(train="seq,label\nACGT,0\nCCGG,1\n"),
        ["train.csv", "missing column(s) 'sequence'", "found: 'seq', 'label'"],
    ),
    (
        "missing-both-columns",
        csv_folder(test="a,b,c\n1,2,3\n"),
        ["test.csv", "'sequence', 'label'", "found: 'a', 'b', 'c'"],
    ),
    (
        "empty-label",
        csv_folder(train="sequence,label\nACGT,0\nCCGG,\nTTAA,0\nGGCA,1\n"),
        ["train.csv row 2 (line 3)", "missing label"],
    ),
    (
        "nan-label",
        csv_folder(test="sequence,label\nACGA,0\nCCGA,NaN\n"),
        ["test.csv row 2 (line 3)", "missing label", "'NaN'"],
    ),
    (
        "inconsistent-label-types",
        csv_folder(train="sequence,label\nACGT,0\nCCGG,1\nTTAA,yes\nGGCA,1\n"),
        ["train.csv row 3 (line 4)", "inconsistent label types", "'yes'", "string"],
    ),
    (
        "inconsistent-label-types-across-splits",
        csv_folder(test="sequence,label\nACGA,a\nCCGA,b\n"),
        ["test.csv row 1 (line 2)", "inconsistent label types", "'a'"],
    ),
    (
        "fractional-label-is-not-an-integer",
        csv_folder(train="sequence,label\nACGT,0\nCCGG,1.5\nTTAA,0\nGGCA,1\n"),
        ["train.csv row 2 (line 3)", "'1.5' is not an integer class id"],
    ),
    (
        "labels-not-0-to-k-1",
        csv_folder(
            train="sequence,label\nACGT,1\nCCGG,2\nTTAA,1\nGGCA,2\n",
            test="sequence,label\nACGA,1\nCCGA,2\n",
        ),
        ["train.csv row 2 (line 3)", "label '2'", "not a class id 0..1"],
    ),
    (
        "negative-label",
        csv_folder(test="sequence,label\nACGA,0\nCCGA,-1\n"),
        ["test.csv row 2 (line 3)", "label '-1'", "0..K-1"],
    ),
    (
        "one-class-split",
        csv_folder(test="sequence,label\nACGA,1\nCCGA,1\n"),
        ["test.csv", "only one class", "'1'", "2 rows"],
    ),
    (
        "one-class-split-string-labels",
        csv_folder(
            train="sequence,label\nACGT,x\nCCGG,y\n", test="sequence,label\nACGA,y\nCCGA,y\n"
        ),
        ["test.csv", "only one class", "'y'"],
    ),
    ("missing-test-split", without("test.csv"), ["no test split", "test.csv, test.parquet"]),
    ("missing-train-split", without("train.csv"), ["no train split"]),
    (
        "split-given-twice",
        extra_file("train.fa", ">a|0\nACGT\n"),
        ["split 'train' is given more than once", "train.csv", "train.fa"],
    ),
    ("empty-csv", csv_folder(train=""), ["train.csv", "empty"]),
    ("header-only-csv", csv_folder(train="sequence,label\n"), ["train.csv", "no data rows"]),
    (
        "ragged-csv",
        csv_folder(train="sequence,label\nACGT,0\nCCGG,1,extra,more\n"),
        ["train.csv", "not a readable csv"],
    ),
    (
        "unknown-category",
        csv_folder(meta={"category": "promoter"}),
        ["task.json", "category", "'promoter'", "Did you mean 'promoters'"],
    ),
    (
        "task-json-count-mismatch",
        csv_folder(meta={"n_train": 5}),
        ["task.json", "n_train=5", "train.csv has 4 rows"],
    ),
    (
        "task-json-n-classes-mismatch",
        csv_folder(meta={"n_classes": 3}),
        ["task.json", "n_classes=3", "[2]"],
    ),
    (
        "task-json-label-names-disagree-with-string-labels",
        csv_folder(
            train="sequence,label\nACGT,x\nCCGG,y\n",
            test="sequence,label\nACGA,y\nCCGA,x\n",
            meta={"label_names": ["y", "x"]},
        ),
        ["task.json", "'label_names'", "sorted order"],
    ),
    ("task-json-not-json", extra_file("task.json", "{name: x"), ["task.json", "not valid JSON"]),
    (
        "task-json-wrong-type",
        csv_folder(meta={"n_classes": "two"}),
        ["task.json", "'n_classes'", "'two'"],
    ),
    (
        "fasta-header-without-label",
        fasta_folder(">a|0\nACGT\n>b\nCCGG\n>c|1\nTTTT\n"),
        ["train.fa line 3", "no label in header", "'>b'"],
    ),
    (
        "fasta-sequence-before-header",
        fasta_folder("ACGT\n>a|0\nACGT\n"),
        ["train.fa line 1", "before the first '>' header"],
    ),
    (
        "fasta-invalid-character",
        fasta_folder(">a|0\nACGT\n>b|1\nCC\nG!\n"),
        ["train.fa line 3", "invalid character '!'"],
    ),
    (
        "fasta-record-without-sequence",
        fasta_folder(">a|0\nACGT\n>b|1\n>c|1\nGG\n"),
        ["train.fa line 3", "empty sequence"],
    ),
    (
        "parquet-missing-sequence",
        parquet_folder(pd.DataFrame({"sequence": ["ACGT", None, "GG"], "label": [0, 1, 0]})),
        ["train.parquet row 2", "missing sequence"],
    ),
    (
        "parquet-nan-label",
        parquet_folder(pd.DataFrame({"sequence": ["ACGT", "CC", "GG"], "label": [0, None, 1.0]})),
        ["train.parquet row 2", "missing label (NaN)"],
    ),
    (
        "parquet-fractional-label",
        parquet_folder(pd.DataFrame({"sequence": ["ACGT", "CC", "GG"], "label": [0, 0.5, 1.0]})),
        ["train.parquet row 2", "0.5", "not an integer"],
    ),
    (
        "parquet-missing-column",
        parquet_folder(pd.DataFrame({"sequence": ["ACGT", "CC"], "target": [0, 1]})),
        ["train.parquet", "missing column(s) 'label'", "found: 'sequence', 'target'"],
    ),
]


@pytest.mark.parametrize(("case", "build", "fragments"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_gives_its_specific_error(tmp_path, case, build, fragments) -> None:
    folder = tmp_path / "task"
    folder.mkdir()
    build(folder)
    with pytest.raises(TaskError) as info:
        load_task_folder(folder)
    msg = str(info.value)
    for frag in fragments:
        assert frag in msg, f"{case}: {frag!r} not in {msg!r}"


@pytest.mark.parametrize(("case", "build", "fragments"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_through_the_cli_has_no_traceback(tmp_path, case, build, fragments) -> None:
    folder = tmp_path / "task"
    folder.mkdir()
    build(folder)
    result = CliRunner().invoke(app, ["tasks", "show", str(folder)])
    assert result.exit_code == 2, result.output
    assert "error:" in result.output
    assert "Traceback" not in result.output
    assert not isinstance(result.exception, GenebError)
    flat = " ".join(result.output.split())
    assert fragments[0].split()[-1] in flat  # the location survives the terminal wrapping
