"""A store entry read by tools that are not geneb (issue 19 #14, #15): plain xarray opens
every entry (zarr v3 ``dimension_names``), and the map from class ids back to the task's
original labels is in the entry's attributes, in ``read_entry`` and in ``store export``.
Entries written before either existed keep reading through geneb."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

import geneb
from geneb.cli import app
from geneb.errors import StoreError
from geneb.store import FeatureStore, Provenance, StoreKey

xr = pytest.importorskip("xarray")

KEY = StoreKey("org/model", "task_a", "train")
ARGS = (KEY.model, KEY.task, KEY.split)
X = np.random.default_rng(5).standard_normal((40, 3)).astype(np.float32)
LABELS = np.arange(40) % 3
ROWS = np.arange(40) * 3 + 1
NAMES = ("donor", "acceptor", "[/red] neither")  # ids 0, 1, 2 -> the task's own labels


def _write(url: str, label_names: tuple[str, ...] | None = NAMES) -> None:
    st = FeatureStore(url, mode="a")
    prov = Provenance(KEY.model, "rev", KEY.task, "sha256:f")
    with st.writer(KEY, provenance=prov, labels=LABELS, rows=ROWS, dim=3,
                   label_names=label_names) as w:
        w.append(X)


@pytest.fixture(params=["direct", "zarr"])
def store(request, tmp_path: Path) -> tuple[str, Path]:
    """(URL geneb writes through, folder on disk): the direct writer and zarr-python."""
    folder = tmp_path / "S.zarr"
    url = str(folder) if request.param == "direct" else f"local://{folder}"
    return url, folder


def test_plain_xarray_opens_an_entry(store) -> None:
    url, folder = store
    _write(url)
    ds = xr.open_zarr(folder, group=KEY.path, consolidated=False)
    np.testing.assert_array_equal(ds["embeddings"].values, X)  # reference: what was written
    np.testing.assert_array_equal(ds["labels"].values, LABELS)
    np.testing.assert_array_equal(ds["row"].values, ROWS)
    assert ds["embeddings"].dims == ("sample", "feature") and ds["labels"].dims == ("sample",)
    assert "row" in ds.coords  # as in StoreEntry.to_xarray
    entry = geneb.read_entry(folder, *ARGS)
    ours = entry.to_xarray()
    xr.testing.assert_equal(ds.drop_attrs(), ours.drop_attrs())
    assert ds.attrs["label_names"] == list(NAMES) == ours.attrs["label_names"]


def _strip(folder: Path) -> None:
    """Make the entry look written by an older geneb: no dimension_names, no label map."""
    for name in ("embeddings", "labels", "row"):
        p = folder / KEY.path / name / "zarr.json"
        meta = json.loads(p.read_text())
        meta.pop("dimension_names", None)
        meta["attributes"] = {}
        p.write_text(json.dumps(meta))
    p = folder / KEY.path / "zarr.json"
    meta = json.loads(p.read_text())
    del meta["attributes"]["label_names"]
    p.write_text(json.dumps(meta))


def test_an_older_entry_still_reads_and_exports(store, tmp_path: Path) -> None:
    url, folder = store
    _write(url)
    _strip(folder)
    entry = FeatureStore(url).get(*ARGS)
    np.testing.assert_array_equal(entry.embeddings, X)
    np.testing.assert_array_equal(entry.labels, LABELS)
    assert entry.label_names is None
    assert FeatureStore(url).verify() == []
    with np.load(_export(folder, tmp_path, "npz")) as z:
        assert "label_names" not in z.files
        np.testing.assert_array_equal(z["labels"], LABELS)
    t = pq.read_table(_export(folder, tmp_path, "parquet"))
    assert t.column_names == ["row", "label", "embedding"]


def test_read_entry_maps_ids_to_the_tasks_labels(store) -> None:
    url, folder = store
    _write(url)
    entry = geneb.read_entry(folder, *ARGS)
    assert entry.label_names == NAMES
    # reference: the names indexed by the ids written
    assert [entry.label_names[i] for i in entry.labels] == [NAMES[i] for i in LABELS]


def _export(folder: Path, tmp_path: Path, fmt: str) -> Path:
    out = tmp_path / f"e.{fmt}"
    r = CliRunner().invoke(app, ["store", "export", "--store", str(folder), "--model", KEY.model,
                                 "--task", KEY.task, "--split", KEY.split, "--out", str(out),
                                 "--format", fmt])
    assert r.exit_code == 0, r.output
    return out


def test_export_carries_the_label_map(store, tmp_path: Path) -> None:
    url, folder = store
    _write(url)
    with np.load(_export(folder, tmp_path, "npz")) as z:
        assert z["label_names"].tolist() == list(NAMES)
        assert z["label_names"][z["labels"]].tolist() == [NAMES[i] for i in LABELS]
    t = pq.read_table(_export(folder, tmp_path, "parquet"))
    assert t["label_name"].to_pylist() == [NAMES[i] for i in LABELS]
    assert t["label"].to_pylist() == LABELS.tolist()
    assert json.loads(t.schema.metadata[b"geneb.label_names"]) == list(NAMES)


def test_extract_records_the_tasks_label_names(tmp_path: Path) -> None:
    # a task with string labels: ids are given in sorted order (the loader's documented rule)
    task_dir = tmp_path / "t"
    task_dir.mkdir()
    for split in ("train", "test"):
        (task_dir / f"{split}.csv").write_text(
            "sequence,label\nACGTACGT,promoter\nCCGGTTAA,background\nACGAACGA,promoter\n"
            "TTTTCCCC,background\n")
    geneb.extract(str(tmp_path / "S.zarr"), ["kmer-2"], [str(task_dir)], device="cpu")
    entry = geneb.read_entry(tmp_path / "S.zarr", "kmer-2", "t", "train")
    assert entry.label_names == ("background", "promoter")
    got = [entry.label_names[i] for i in entry.labels]
    assert got == ["promoter", "background", "promoter", "background"]  # the CSV, row order


def test_label_names_must_cover_every_class(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="has 2 names, but the labels go up to class id 2"):
        _write(str(tmp_path / "S.zarr"), NAMES[:2])
    assert FeatureStore(tmp_path / "S.zarr").keys() == []  # refused before anything was written
