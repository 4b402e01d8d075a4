"""Class counts and split sizes in the task catalogue: how many, each with a source, and the
ones that name a staged file in ../shared/data equal that file's row count (counted here with
the csv module, independently of geneb's readers)."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import TaskError
from geneb.tasks.catalogue import CATALOGUE_FILE, load_task_catalogue

SIZES = ("n_train", "n_valid", "n_test")
SHARED_PREFIX = "../shared/data/"
#: tasks with n_classes, n_train and n_test (all sourced) per suite, as committed
FILLED_PER_SUITE = {
    "gue": 28, "genomic_benchmarks": 9, "geneb_staged": 11, "nt_revised": 18, "geneb_tasks": 6,
    "plant_genomic_benchmark": 6,
    "long_range": 2,
}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    result = CliRunner().invoke(app, ["tasks", "catalogue", "--json"])
    assert result.exit_code == 0, result.output
    return [r for r in json.loads(result.output) if r["kind"] == "classification"]


def _filled(row: dict) -> bool:
    return all(row[k] is not None for k in ("n_classes", "n_train", "n_test"))


def test_counts_of_tasks_with_classes_and_sizes(rows) -> None:
    assert len(rows) == 119
    filled = Counter(r["suite"] for r in rows if _filled(r))
    for suite, n in FILLED_PER_SUITE.items():
        assert filled[suite] >= n, (suite, filled[suite])
    assert sum(filled.values()) >= 80
    # GUE ships a dev split for all 28 datasets; all 28 have n_valid and n_test
    gue = [r for r in rows if r["suite"] == "gue"]
    assert sum(r["n_valid"] is not None and r["n_test"] is not None for r in gue) == 28
    assert sum(r["n_classes"] is not None for r in rows) >= 108


def test_every_stated_size_has_a_source_and_is_checked(rows) -> None:
    for r in rows:
        for key in SIZES:
            if r[key] is None:
                assert key not in r["sources"], (r["name"], key)
                continue
            assert r[key] > 0, (r["name"], key)
            assert r["sources"].get(key), (r["name"], key)
            assert key in r["checked"], (r["name"], key)
            for src in r["sources"][key]:
                assert src.startswith(("https://", SHARED_PREFIX)), (r["name"], src)


def _count_rows(path: Path) -> tuple[int, set[str]]:
    with path.open(newline="") as f:
        reader = csv.reader(f)
        header = next(reader)
        col = header.index("label")
        labels = [line[col] for line in reader]
    return len(labels), set(labels)


def test_sizes_naming_a_staged_file_equal_its_row_count(rows, data_dir: Path) -> None:
    """Where the catalogue claims a staged file is the split it counts, the numbers agree."""
    compared = Counter()
    for r in rows:
        for key in SIZES:
            for src in r["sources"].get(key, []):
                if not (src.startswith(SHARED_PREFIX) and src.endswith(".csv")):
                    continue  # a README stating a published size is not a row-count claim
                path = data_dir / src[len(SHARED_PREFIX):]
                n, labels = _count_rows(path)
                assert r[key] == n, (r["name"], key, src, r[key], n)
                assert len(labels) <= r["n_classes"], (r["name"], src)
                compared[path.parent.name] += 1
    # every staged folder except gue_prom_core_all (both splits subsampled) is compared
    folders = {p.name for p in data_dir.iterdir() if (p / "train.csv").is_file()}
    assert set(compared) == folders - {"gue_prom_core_all"}
    assert sum(compared.values()) == 31  # 14 folders x 2 splits + 3 x 1


def _staged_folder(row: dict, data_dir: Path) -> Path | None:
    """The staged copy a row's sources name (gue_human_tf_0 -> gue_tf_0), else its name."""
    for srcs in row["sources"].values():
        for src in srcs:
            if src.startswith(SHARED_PREFIX):
                return data_dir / src[len(SHARED_PREFIX):].split("/")[0]
    folder = data_dir / row["name"]
    return folder if (folder / "train.csv").is_file() else None


def test_a_staged_class_count_equals_the_labels_in_its_files(rows, data_dir: Path) -> None:
    staged = {r["name"]: _staged_folder(r, data_dir) for r in rows}
    staged = {k: v for k, v in staged.items() if v is not None}
    folders = {p.name for p in data_dir.iterdir() if (p / "train.csv").is_file()}
    assert {v.name for v in staged.values()} == folders  # all 18 staged tasks are catalogued
    for name, folder in staged.items():
        labels = _count_rows(folder / "train.csv")[1] | _count_rows(folder / "test.csv")[1]
        assert len(labels) == next(r["n_classes"] for r in rows if r["name"] == name), name


def test_a_size_without_a_source_is_refused(tmp_path: Path) -> None:
    base = json.loads(CATALOGUE_FILE.read_text())["tasks"][0]
    cases = [
        (dict(base, n_train=10), r"'n_train' is 10 but has no source"),
        (dict(base, sources={"n_test": "https://x"}), r"sources\['n_test'\] given but"),
        (dict(base, n_test=5, sources={"n_test": []}),
         r"sources\['n_test'\]: expected at least 1 entry, got an empty list"),
        (dict(base, n_test=5, sources={"size": "https://x"}),
         r"sources key: expected one of 'n_classes', .*, got 'size'"),
    ]
    for i, (obj, pattern) in enumerate(cases):
        path = tmp_path / f"c{i}.json"
        path.write_text(json.dumps({"tasks": [obj]}))
        with pytest.raises(TaskError, match=re.compile(r"entry 1 \(nt_h3\).*" + pattern)):
            load_task_catalogue(path)
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"tasks": [dict(base, n_test=5, sources={"n_test": "https://x"})]}))
    assert load_task_catalogue(ok)[0].sources == {"n_test": ("https://x",)}
