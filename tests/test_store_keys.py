"""Store keys: safe path segments, no collisions, traversal rejected."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst

from geneb.errors import StoreError
from geneb.store import FeatureStore, Provenance, StoreKey, safe_name

SEGMENT = re.compile(r"^[A-Za-z0-9_+=~-][A-Za-z0-9._+=~-]*$")


@pytest.mark.parametrize(
    "bad", ["../etc", "a/../b", "/abs/path", "a//b", "a\\b", ".", "..", "", "  ", "a/"]
)
def test_traversal_and_empty_segments_rejected(bad):
    with pytest.raises(StoreError, match="invalid name|non-empty"):
        safe_name(bad)
    with pytest.raises(StoreError):
        StoreKey(bad, "task", "train")
    with pytest.raises(StoreError):
        StoreKey("model", bad, "train")


@pytest.mark.parametrize("split", ["../x", "a/b", "", "tr ain"])
def test_bad_split_rejected(split):
    with pytest.raises(StoreError, match="split"):
        StoreKey("m", "t", split)


def test_examples():
    assert safe_name("kmer-5") == "kmer-5"
    assert safe_name("gue_mouse_0") == "gue_mouse_0"
    assert safe_name("InstaDeepAI/nucleotide-transformer") == "InstaDeepAI--nucleotide-transformer"
    assert safe_name("a-/b") != safe_name("a/-b")  # both would join to "a---b"
    assert safe_name("a--b") != safe_name("a/b")
    assert safe_name("random:kmer-5").startswith("random_kmer-5~")
    assert safe_name(".hidden").startswith("_hidden~")


ALPHABET = hst.sampled_from(list("ab-_./:\\ ~") + ["é"])


def _should_reject(name: str) -> bool:
    return not name.strip() or "\\" in name or any(p in ("", ".", "..") for p in name.split("/"))


@settings(max_examples=300, deadline=None)
@given(hst.text(ALPHABET, min_size=1, max_size=8), hst.text(ALPHABET, min_size=1, max_size=8))
def test_safe_names_are_single_segments_and_injective(name, other):
    """Small alphabet full of separators, so hypothesis finds near-collisions."""
    if _should_reject(name):
        with pytest.raises(StoreError):
            safe_name(name)
        return
    s = safe_name(name)
    assert SEGMENT.match(s), s
    assert "/" not in s and s not in (".", "..")
    if other != name and not _should_reject(other):
        assert safe_name(other) != s, (name, other)


def test_colliding_ids_get_distinct_groups(tmp_path):
    st = FeatureStore(tmp_path / "s", mode="a")
    ids = ["a/b", "a--b", "a_b", "a:b", "a-/b", "a/-b"]
    for i, m in enumerate(ids):
        k = StoreKey(m, "t", "train")
        with st.writer(k, provenance=Provenance(m, "r", "t", "f"), labels=[0], rows=[0],
                       dim=1) as w:
            w.append(np.array([[float(i)]], np.float32))
    assert len({StoreKey(m, "t", "train").path for m in ids}) == len(ids)
    for i, m in enumerate(ids):
        assert st.get(m, "t", "train").embeddings[0, 0] == i
    assert sorted(k.model for k in st.keys()) == sorted(ids)
