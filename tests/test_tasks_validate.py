"""The vectorised validators against slow, obvious row-by-row reference implementations."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geneb.errors import TaskError
from geneb.tasks.loader import load_task_folder
from geneb.tasks.save import save_task_folder
from geneb.tasks.synthetic import build_synthetic_task
from geneb.tasks.validate import ALPHABET, check_sequences, classify_labels, csv_locator

ALLOWED = set(ALPHABET) | set(ALPHABET.lower())


def reference_check(seqs: list[str]) -> tuple[str, int, int] | tuple[list[str], int]:
    """Row by row: first problem as (kind, row, 1-based column), else (upper-cased, n lower)."""
    for i, s in enumerate(seqs):
        if s == "":
            return ("empty", i, 0)
        for j, c in enumerate(s):
            if c not in ALLOWED:
                return ("char", i, j + 1)
    return [s.upper() for s in seqs], sum(s != s.upper() for s in seqs)


sequences = st.lists(
    st.text(alphabet="ACGTNacgtnRYswXU-é ", min_size=0, max_size=12), min_size=1, max_size=25
)


@settings(max_examples=300, deadline=None)
@given(sequences)
def test_check_sequences_matches_reference(seqs: list[str]) -> None:
    ref = reference_check(seqs)
    where = csv_locator("x.csv")
    if isinstance(ref[0], str):
        kind, row, col = ref
        with pytest.raises(TaskError) as info:
            check_sequences(seqs, where)
        msg = str(info.value)
        assert msg.startswith(where(row) + ":"), (msg, ref)
        if kind == "empty":
            assert "empty sequence" in msg
        else:
            assert f"invalid character {seqs[row][col - 1]!r} at position {col} " in msg
    else:
        upper, n_lower = ref
        out = check_sequences(seqs, where)
        assert list(out.sequences) == upper and out.uppercased_rows == n_lower
        np.testing.assert_array_equal(out.lengths, [len(s) for s in seqs])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-5, 10**12), min_size=1, max_size=20))
def test_integer_labels_as_text_parse_like_int(values: list[int]) -> None:
    raw = classify_labels(np.array([f" {v} " for v in values], dtype=object), csv_locator("x"))
    assert raw.kind.tolist() == [1] * len(values)
    assert raw.ints.tolist() == values


def test_integral_float_labels_are_integers(tmp_path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "train.csv").write_text("sequence,label\nACGT,0.0\nCCGG,1.0\nTTAA,1\n")
    (folder / "test.csv").write_text("sequence,label\nACGA,0\nCCGA,1\n")
    task = load_task_folder(folder)
    assert task.split("train").labels.tolist() == [0, 1, 1]
    assert task.spec.label_names == ("0", "1")


def test_save_task_folder_refuses_a_non_empty_folder(tmp_path) -> None:
    task = build_synthetic_task("syn_tf_ctcf", n_train=20, n_test=10)
    save_task_folder(task, tmp_path / "t")
    with pytest.raises(TaskError, match="not empty"):
        save_task_folder(task, tmp_path / "t")
    save_task_folder(task, tmp_path / "t", overwrite=True, fmt="parquet")
