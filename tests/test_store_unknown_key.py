"""Issue 28, "Also": a mistyped store key names the nearest few keys and a count, never every
key of the store.

Held out from the issue's replay: a store of 60 entries (3 models x 10 tasks x 2 splits), a
typo in each part of a key, an empty store; the nearest keys expected are computed here with
difflib over the keys this test wrote.
"""

from __future__ import annotations

import difflib

import numpy as np
import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import UnknownNameError
from geneb.store import FeatureStore, Provenance, StoreKey
from geneb.store.keys import NEAREST_KEYS


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("s") / "s.zarr"
    fs = FeatureStore(path, "a")
    keys = []
    for m in ("kmer-2", "kmer-3", "org--model"):
        for t in range(10):
            for split in ("train", "test"):
                key = StoreKey(m, f"task_{t:02d}", split)
                prov = Provenance(model_id=m, revision="r", task_id=key.task,
                                  task_fingerprint="sha256:0")
                with fs.writer(key, provenance=prov, labels=np.zeros(2, dtype=np.int64),
                               rows=np.arange(2), dim=3) as w:
                    w.append(np.ones((2, 3), dtype=np.float32))
                keys.append(str(key))
    return path, keys


@pytest.mark.parametrize("typo", [("kmer-4", "task_03", "train"), ("kmer-2", "task_3", "test"),
                                  ("org--model", "task_07", "tset")])
def test_unknown_key_lists_the_nearest_and_a_count(store, typo):
    path, keys = store
    fs = FeatureStore(path, "r")
    with pytest.raises(UnknownNameError) as e:
        fs.get(*typo)
    msg = str(e.value)
    typed = str(StoreKey(*typo))
    near = difflib.get_close_matches(typed, sorted(keys), n=NEAREST_KEYS, cutoff=0.0)
    assert f"Nearest of the store's {len(keys)} key(s): " in msg, msg
    assert ", ".join(repr(k) for k in near) in msg, msg
    assert f"and {len(keys) - NEAREST_KEYS} more (all of them: geneb store ls of {path})" in msg
    listed = [k for k in keys if repr(k) in msg]
    assert sorted(listed) == sorted(near)  # never every key
    with pytest.raises(UnknownNameError):
        fs.info(StoreKey(*typo))


def test_empty_store_says_so(tmp_path):
    fs = FeatureStore(tmp_path / "e.zarr", "a")
    with pytest.raises(UnknownNameError, match=r"store's 0 key\(s\): \(none: the store is empty"):
        fs.get("a", "b", "train")


def test_cli_info_is_one_line(store):
    path, keys = store
    r = CliRunner().invoke(app, ["store", "info", "--store", str(path), "-m", "kmer-9", "-t", "task_01",
                                  "-s", "train"])
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert "Nearest of the store's 60 key(s)" in text and sum(k in text for k in keys) <= 5
