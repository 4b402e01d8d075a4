"""What runs through geneb, measured, for GENEB's 41 leaderboard models (issue 32, part 3).

Each entry of the catalogue's GENEB set carries ``runs`` (one of ``catalogue.RUNS``) and
``runs_via``. This module measures ``runs`` from what geneb actually does here, never from the
field itself, and fails when the committed field says otherwise:

- ``family``: ``runs_via`` names the family's code here, ``fixture:<folder under
  ../shared/models>`` or ``builder:<tests/file.py>::<function>`` (a test builder of a tiny
  model on the family's package, returning a model spec, or ``(spec, options)``); geneb embeds
  real sequences with it (finite, the right shape).
- ``native``: ``runs_via`` names the checkpoint's transformers class; geneb's checks accept
  the catalogue name without code or packages, and geneb embeds with a tiny random-weight
  model of that class (the configuration of a shared tiny model of the same ``model_type``).
- ``cuda``: ``check_spec`` refuses it on the CPU, naming the package and CUDA.
- ``no code``: none of the above, and geneb refuses it before any load even with
  ``trust_remote_code=True`` (an empty Hugging Face cache: the hub is never reachable from a
  test); ``runs_via`` says where its code was looked for.

Adding a family adapter flips a row by editing the catalogue entry (``runs: "family"``,
``runs_via: "builder:..."``). docs/models.md holds the 41-row table this module writes
(``python tests/test_models_coverage.py`` prints it).
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from geneb.errors import ModelError
from geneb.models import catalogue as cat
from tests.conftest import DATA_DIR, MODELS_DIR, REPO, SHARED

SHARED_MODELS = MODELS_DIR
TINY = SHARED_MODELS / "tiny"
DOC = REPO / "docs" / "models.md"
SEQS = ["ACGTTGCAAGCTAGCTTACG" * 3, "GGATCCATTA" * 7, "TTAGGC" * 5]


def geneb_entries() -> list[cat.CatalogueEntry]:
    return [e for e in cat.load_catalogue() if "GENEB" in e.studies]


def _embed_ok(spec: str, **options: Any) -> None:
    import geneb

    emb = geneb.get_embedder(spec, device="cpu", **options)
    x = emb.embed(SEQS)
    assert x.shape == (len(SEQS), emb.dim) and np.isfinite(x).all(), spec


def _call_builder(via: str, out: Path) -> tuple[str, dict[str, Any]]:
    path, _, func = via.partition("::")
    mod_name = Path(path).stem
    if str(REPO / "tests") not in sys.path:
        sys.path.insert(0, str(REPO / "tests"))
    module = importlib.import_module(mod_name)
    builder = getattr(module, func)
    kwargs: dict[str, Any] = {}
    for name in inspect.signature(builder).parameters:
        kwargs[name] = {"out": out, "data_dir": DATA_DIR}[name]
    got = builder(**kwargs)
    spec, opts = got if isinstance(got, tuple) else (got, {})
    return str(spec), dict(opts)


#: the options a family's documented embedding needs (LucaOne: between [CLS] and [SEP])
FAMILY_OPTIONS = {"builder:tests/test_families_packages.py::build_tiny_lucaone":
                  {"pooling": "mean_nonspecial"},
                  "builder:tests/test_families_tracks.py::build_tiny_enformer":
                  {"max_length": 256}}


@cache
def _family_runs(via: str, tmp: Path) -> bool:
    kind, _, where = via.partition(":")
    if kind == "fixture":
        folder = SHARED_MODELS / where
        assert folder.is_dir(), f"{via}: no such fixture"
        _embed_ok(str(folder), trust_remote_code=not where.startswith("families/gpn"))
        return True
    assert kind == "builder", f"runs_via {via!r}: expected 'fixture:...' or 'builder:...'"
    out = tmp / f"built-{abs(hash(via))}"
    spec, opts = _call_builder(where, out / "model")
    _embed_ok(spec, **{**FAMILY_OPTIONS.get(via, {}), **opts})
    return True


def _tiny_of_class(class_name: str, out: Path) -> Path:
    """A random-weight model of transformers class ``class_name``, on the configuration and
    tokenizer of the shared tiny model with the same ``model_type``."""
    import json
    import shutil

    import torch
    import transformers

    cls = getattr(transformers, class_name)
    model_type = cls.config_class.model_type
    src = next((d for d in sorted(TINY.iterdir()) if d.is_dir() and json.loads(
        (d / "config.json").read_text()).get("model_type") == model_type), None)
    assert src is not None, f"no shared tiny model of model_type {model_type!r} under {TINY}"
    config = cls.config_class.from_pretrained(src)
    torch.manual_seed(0)
    cls(config).save_pretrained(out)
    for f in src.iterdir():
        if f.name.startswith(("tokenizer", "vocab", "special_tokens")):
            shutil.copy(f, out / f.name)
    return out


@cache
def _native_runs(class_name: str, tmp: Path) -> bool:
    import transformers

    assert hasattr(transformers, class_name), f"{class_name!r} is not a transformers class"
    folder = _tiny_of_class(class_name, tmp / f"native-{class_name}")
    _embed_ok(str(folder))
    return True


def _squash(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalnum())


def _check_native_class(entry: cat.CatalogueEntry, class_name: str) -> None:
    """The class agrees with the catalogue's facts: no code of its own, the head it has."""
    assert entry.trust_remote_code is False, f"{entry.name}: a native class runs no own code"
    caps = entry.capabilities or ()
    if class_name.endswith("ForMaskedLM"):
        assert "masked_lm" in caps, (entry.name, class_name, caps)
    if class_name.endswith(("ForCausalLM", "LMHeadModel")):
        assert "causal_lm" in caps, (entry.name, class_name, caps)


def measured_runs(entry: cat.CatalogueEntry, tmp: Path) -> str:
    """What geneb does with ``entry`` here (see module doc)."""
    import transformers

    import geneb
    from geneb.models.registry import check_spec

    via = entry.runs_via or ""
    if entry.cuda_packages:
        with pytest.raises(ModelError) as e:
            check_spec(entry.name, device="cpu")
        msg = str(e.value)
        assert "CUDA" in msg and all(p in msg for p in entry.cuda_packages), msg
        return "cuda"
    if via.startswith("fixture:"):  # the catalogue's own record of the family's fixture
        assert via == f"fixture:{entry.test_fixture}", (entry.name, via, entry.test_fixture)
        return "family" if _family_runs(via, tmp) else "no code"
    if via.startswith("builder:"):  # the builder is the family's (its name says which)
        func = via.rpartition("::")[2]
        assert entry.family and _squash(entry.family) in _squash(func), (entry.name, via)
        return "family" if _family_runs(via, tmp) else "no code"
    if via.isidentifier() and hasattr(transformers, via):
        _check_native_class(entry, via)
        check_spec(entry.name)  # no refusal: no code, no package, no CUDA needed
        return "native" if _native_runs(via, tmp) else "no code"
    if entry.trust_remote_code is False:
        try:  # geneb would load it natively: then its class must be named and measured
            check_spec(entry.name)
        except ModelError:
            pass
        else:
            return "native (class not named in runs_via)"
    with pytest.raises(ModelError):  # nothing here can run it, even with its code allowed
        geneb.get_embedder(entry.name, trust_remote_code=True, device="cpu")
    return "no code"


@pytest.fixture(scope="module")
def empty_hf_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hf-empty")


@pytest.mark.parametrize("name", [e.name for e in geneb_entries()])
def test_runs_field_is_what_geneb_does(
    name: str, empty_hf_cache: Path, tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not SHARED_MODELS.is_dir():
        pytest.fail(f"{SHARED_MODELS} missing: the shared test models are needed")
    monkeypatch.setenv("HF_HUB_CACHE", str(empty_hf_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    entry = cat.lookup(name)
    assert entry is not None and entry.runs is not None and entry.runs_via, name
    got = measured_runs(entry, tmp_path_factory.getbasetemp())
    assert got == entry.runs, f"{name}: catalogue runs={entry.runs!r}, measured {got!r}"


@pytest.mark.parametrize("name, edit", [
    ("GenomeOcean-500M", {"runs": "native", "runs_via": "MistralForCausalLM"}),  # own code
    ("MutBERT", {"runs": "family",
                 "runs_via": "builder:tests/test_families_omni_dna.py::build_tiny_omni_dna"}),
    ("GROVER", {"runs": "no code", "runs_via": "nowhere"}),  # it does run natively
    ("Omni-DNA-300M", {"runs": "native", "runs_via": "BertForMaskedLM"}),
])
def test_a_wrong_field_fails(name: str, edit: dict[str, str], empty_hf_cache: Path,
                             tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses

    monkeypatch.setenv("HF_HUB_CACHE", str(empty_hf_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    entry = dataclasses.replace(cat.lookup(name), **edit)  # type: ignore[arg-type]
    try:
        got = measured_runs(entry, tmp_path)
    except (AssertionError, pytest.fail.Exception):
        return
    assert got != entry.runs, f"{name}: {edit} was not caught"


def test_the_set_is_geneb_41() -> None:
    entries = geneb_entries()
    assert len(entries) == 41
    assert all(e.runs in cat.RUNS for e in entries)
    others = [e.name for e in cat.load_catalogue() if "GENEB" not in e.studies and e.runs]
    assert others == [], f"runs is measured for GENEB's 41 only: {others}"


def test_models_list_shows_runs() -> None:
    """``geneb models list --study GENEB``: a ``runs`` column; ``--json``: both fields."""
    import json

    from typer.testing import CliRunner

    from geneb.cli import app

    res = CliRunner().invoke(app, ["models", "list", "--study", "GENEB"])
    assert res.exit_code == 0, res.output
    header = next(ln for ln in res.output.splitlines() if "name" in ln and "hub id" in ln)
    assert "runs" in header, header
    res = CliRunner().invoke(app, ["models", "list", "--study", "GENEB", "--json"])
    listed = {e["name"]: e for e in json.loads(res.output)}
    assert {n: (e["runs"], e["runs_via"]) for n, e in listed.items()} == {
        e.name: (e.runs, e.runs_via) for e in geneb_entries()}


def leaderboard_ids() -> list[str]:
    """GENEB's 41 model ids, from the shared transcription of its leaderboard."""
    import csv

    path = SHARED / "published" / "geneb-9642d48" / "task_mcc_full.csv"
    with path.open(encoding="utf-8") as f:
        return sorted({r["model"] for r in csv.DictReader(f)}, key=str.casefold)


def coverage_table() -> str:
    """The docs/models.md table: one row per GENEB leaderboard id."""
    rows = []
    for geneb_id in leaderboard_ids():
        e = cat.lookup(geneb_id)
        assert e is not None and "GENEB" in e.studies, geneb_id
        via = (e.runs_via or "").replace("|", "\\|")
        rows.append(f"| `{geneb_id}` | {e.name} | {e.runs} | {via} |")
    head = ("| GENEB id | catalogue name | runs | via (native: its class; family: the code "
            "run; cuda: the package; no code: where it was looked for) |\n|---|---|---|---|\n")
    return head + "\n".join(rows) + "\n"


def test_docs_table_matches_the_catalogue() -> None:
    table = coverage_table()
    assert len(table.splitlines()) == 2 + 41
    assert table in DOC.read_text("utf-8"), (
        "docs/models.md: the coverage table is out of date; paste the output of "
        "`python tests/test_models_coverage.py`"
    )


if __name__ == "__main__":
    print(coverage_table(), end="")
