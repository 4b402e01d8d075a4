"""`geneb models fetch`: downloads into the Hugging Face cache from a hub endpoint, then
extraction runs offline; an offline or unreachable hub is one line within 2 s and leaves the
cache as it was. The hub is a local server on 127.0.0.1 (``_local_hub.py``) serving repos
built from a shared tiny model; never the real network.

References are independent of geneb: file bytes and sha256 blob names from the source folder
(hashlib), the commit the server holds, and ``reference_embedding.npy`` (mask-weighted mean of
the last hidden state, written by plain transformers when the tiny model was built).
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from _local_hub import LFS_SUFFIXES, LocalHub
from typer.testing import CliRunner

from geneb.cli import app
from geneb.models import catalogue as cat
from geneb.store import FeatureStore

pytest.importorskip("huggingface_hub")

TINY = "tiny-bert-dnabert2-bpe"
HUB_ID = "geneb-test/tiny-dnabert2"
C1 = "1111111111111111111111111111111111111111"
C2 = "2222222222222222222222222222222222222222"
TASK = "methyl_4mc_c_equisetifolia"
REF_SEQS = [  # ../shared/models/build_tiny_models.py REF_SEQS: the reference embedding's input
    "ACGTAGCATCGGATCTATCTATCGACACTTGGTTATCGATCTACGAGCATCTCGTTAGC",
    "TTGACA" * 10,
    "ACGTN" * 7,
]


@pytest.fixture
def tiny(models_dir: Path) -> Path:
    return models_dir / "tiny" / TINY


def closed_port_url() -> str:
    with socket.socket() as s:  # bound then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def repo_dir(cache: Path, hub_id: str = HUB_ID) -> Path:
    return cache / ("models--" + hub_id.replace("/", "--"))


def blob_name(name: str, data: bytes) -> str:
    """The blob name huggingface_hub gives a file (its ETag): the sha256 of an LFS file, else
    the git object id of the content (computed here with hashlib, as git does)."""
    if name.endswith(LFS_SUFFIXES):
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def snapshot_of_cache(cache: Path) -> dict[str, str | bytes]:
    """Every path under the cache: file bytes, or the target of a link (for exact compares)."""
    out: dict[str, str | bytes] = {}
    for p in sorted(cache.rglob("*")) if cache.exists() else ():
        rel = str(p.relative_to(cache))
        out[rel] = os.readlink(p) if p.is_symlink() else p.read_bytes() if p.is_file() else "/"
    return out


def env_for(tmp_path: Path, endpoint: str, offline: bool = False) -> dict[str, str]:
    """A fresh process' environment: endpoint and cache set before huggingface_hub imports."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env.update(
        HF_ENDPOINT=endpoint,
        HF_HOME=str(tmp_path / "hf-home"),
        HF_HUB_OFFLINE="1" if offline else "0",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        PYTHONPATH=os.pathsep.join(p for p in sys.path if p),
    )
    return env


def geneb(env: dict[str, str], *args: str) -> tuple[subprocess.CompletedProcess, float]:
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "geneb", *args], env=env, capture_output=True,
                       text=True, timeout=300)  # fmt: skip
    return r, time.perf_counter() - t0


@pytest.fixture
def in_process_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """huggingface_hub in this process pointed at a local hub and a fresh cache (the module
    constants it reads at call time; file_download keeps its own copy of the URL template)."""
    from huggingface_hub import constants, file_download

    cache = tmp_path / "hf-cache"

    def point_at(url: str, offline: bool = False) -> Path:
        template = url + "/{repo_id}/resolve/{revision}/{filename}"
        monkeypatch.setattr(constants, "ENDPOINT", url)
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", template)
        monkeypatch.setattr(file_download, "HUGGINGFACE_CO_URL_TEMPLATE", template, raising=False)
        monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", offline)
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_PROGRESS_BARS", True)
        return cache

    return point_at


@pytest.mark.slow  # two fresh processes (fetch, then an offline extraction): ~18 s
def test_fetch_then_extract_offline(tiny: Path, data_dir: Path, tmp_path: Path) -> None:
    with LocalHub() as hub:
        hub.repo(HUB_ID).add(C1, tiny)
        r, _ = geneb(env_for(tmp_path, hub.url), "models", "fetch", HUB_ID)
        assert r.returncode == 0, r.stderr
        assert f"{HUB_ID}@{C1}" in r.stdout and "now runs offline" in r.stdout
        served = list(hub.requests)
    assert ("GET", f"/api/models/{HUB_ID}/revision/main") in served
    assert {m for m, _ in served} <= {"GET", "HEAD"}
    # the cache holds exactly the source files, laid out as huggingface_hub lays them out
    repo = repo_dir(tmp_path / "hf-home" / "hub")
    assert (repo / "refs" / "main").read_text() == C1
    snap = repo / "snapshots" / C1
    src = {f.name: f.read_bytes() for f in tiny.iterdir()}
    assert sorted(p.name for p in snap.iterdir()) == sorted(src)
    for name, data in src.items():
        assert (snap / name).read_bytes() == data, name
        assert (snap / name).resolve().name == blob_name(name, data), name
    # extraction, offline, with the endpoint gone: from the cache at the fetched commit
    store = tmp_path / "store.zarr"
    env = env_for(tmp_path, closed_port_url(), offline=True)
    r, _ = geneb(env, "extract", "--store", str(store), "--model", HUB_ID, "--task",
                 str(data_dir / TASK), "--split", "test", "--device", "cpu")  # fmt: skip
    assert r.returncode == 0, r.stderr
    entry = FeatureStore(store).get(HUB_ID, TASK, "test")
    assert entry.provenance.revision == C1 and entry.embeddings.shape[0] > 0


def test_fetched_model_embeds_like_the_reference(
    tiny: Path, in_process_hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from geneb.models.registry import get_embedder

    with LocalHub() as hub:
        hub.repo(HUB_ID).add(C1, tiny)
        cache = in_process_hub(hub.url)
        res = CliRunner().invoke(app, ["models", "fetch", f"hf:{HUB_ID}"])
        assert res.exit_code == 0, res.output
    in_process_hub(closed_port_url(), offline=True)

    def refuse(*a, **k):
        raise AssertionError(f"network access attempted: {a}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    emb = get_embedder(HUB_ID, device="cpu")
    assert emb.info.revision == C1 and (repo_dir(cache) / "snapshots" / C1).is_dir()
    ref = np.load(tiny / "reference_embedding.npy")
    got = emb.embed(REF_SEQS)
    assert np.abs(got - ref).max() <= 1e-4 * np.abs(ref).max(axis=1, keepdims=True).min()


def _pinned_entry(hub_id: str, commit: str) -> cat.CatalogueEntry:
    """A catalogue entry (every rule of the loader applies) that pins ``commit``."""
    raw = cat.lookup("AgroNT").to_json()
    raw.pop("checked")
    raw.pop("tokenization_class")  # derived from tokenization in to_json, not stored
    raw["sources"].pop("tokenization_class", None)
    raw.update(name="Tiny-Pinned", aliases=[], studies=[], hub_id=hub_id, revision=commit,
               test_fixture=None, n_params=None, n_params_basis=None)  # fmt: skip
    return cat.parse_catalogue([raw])[0]


def test_catalogue_pin_is_fetched_and_resolved(
    tiny: Path, in_process_hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from geneb.models.registry import get_embedder

    pinned_id = "geneb-test/tiny-pinned"
    entries = (*cat.load_catalogue(), _pinned_entry(pinned_id, C1))
    monkeypatch.setattr(cat, "load_catalogue", lambda: entries)
    with LocalHub() as hub:
        repo = hub.repo(pinned_id)
        repo.add(C1, tiny, branch=None)  # the pinned commit: no branch points at it
        repo.add(C2, tiny, config_extra=b"a newer commit on main\n")
        cache = in_process_hub(hub.url)
        res = CliRunner().invoke(app, ["models", "fetch", "Tiny-Pinned"])
        assert res.exit_code == 0, res.output
        assert f"{pinned_id}@{C1}" in res.output and "now runs offline" in res.output
        assert not any("main" in p for _, p in hub.requests), hub.requests
        snaps = repo_dir(cache, pinned_id) / "snapshots"
        assert sorted(p.name for p in snaps.iterdir()) == [C1]
        assert not (repo_dir(cache, pinned_id) / "refs" / "main").exists()
        # extraction resolves the pin (not main, which is not even cached)
        assert get_embedder("Tiny-Pinned", device="cpu").info.revision == C1
        # --revision overrides; the note says extraction still resolves the pin
        res = CliRunner().invoke(app, ["models", "fetch", "Tiny-Pinned", "--revision", "main"])
        assert res.exit_code == 0, res.output
        text = " ".join(res.output.split())
        assert f"{pinned_id}@{C2}" in text and f"extraction resolves {pinned_id} at {C1}" in text
        assert (snaps / C2 / "config_extra").read_bytes() == b"a newer commit on main\n"
    assert get_embedder(pinned_id, device="cpu").info.revision == C1


@pytest.mark.parametrize("how", ["closed port", "HF_HUB_OFFLINE=1"])
def test_offline_or_unreachable_is_one_line_within_2s(
    how: str, tiny: Path, in_process_hub, tmp_path: Path
) -> None:
    offline = how == "HF_HUB_OFFLINE=1"
    with LocalHub() as hub:  # a live hub: with HF_HUB_OFFLINE it must not even be asked
        hub.repo(HUB_ID).add(C1, tiny)
        url = hub.url if offline else closed_port_url()
        cache = in_process_hub(url, offline=offline)
        t0 = time.perf_counter()
        res = CliRunner().invoke(app, ["models", "fetch", HUB_ID])
        secs = time.perf_counter() - t0
        assert hub.requests == []
    out = res.output.strip()
    assert res.exit_code == 2 and len(out.splitlines()) == 1 and "Traceback" not in out, out
    assert secs < 2.0, secs
    assert HUB_ID in out
    assert ("HF_HUB_OFFLINE" in out) if offline else (f"{url} cannot be reached" in out)
    assert snapshot_of_cache(cache) == {}
    # the same in a fresh process, set the way a user sets it (environment variables)
    env = env_for(tmp_path, hub.url if offline else closed_port_url(), offline=offline)
    r, secs = geneb(env, "models", "fetch", HUB_ID)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stdout == "" and not (tmp_path / "hf-home" / "hub").exists()
    assert secs < 10.0, secs  # interpreter start included


def test_failed_download_leaves_the_cache_as_it_was(
    tiny: Path, in_process_hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LocalHub() as hub:
        repo = hub.repo(HUB_ID)
        repo.add(C1, tiny)
        repo.broken.add("model.safetensors")  # listed by the API, 404 when downloaded
        cache = in_process_hub(hub.url)
        res = CliRunner().invoke(app, ["models", "fetch", HUB_ID])
        out = " ".join(res.output.split())
        assert res.exit_code == 2 and "Traceback" not in out, res.output
        assert f"cannot fetch model '{HUB_ID}' at revision 'main'" in out
        assert "model.safetensors: download failed (HTTPError: Not Found)" in out
        assert not repo_dir(cache).exists()
        assert not (cache / ".locks" / repo_dir(cache).name).exists()
        # a good fetch of C1, then main moves to a commit whose weights fail half way
        repo.broken.clear()
        assert CliRunner().invoke(app, ["models", "fetch", HUB_ID]).exit_code == 0
        before = snapshot_of_cache(cache)
        repo.add(C2, tiny, **{"model.safetensors": b"new weights", "extra.txt": b"x"})
        repo.broken.add("model.safetensors")
        res = CliRunner().invoke(app, ["models", "fetch", HUB_ID])
        assert res.exit_code == 2, res.output
        assert snapshot_of_cache(cache) == before  # refs/main back on C1, no C2 files
        assert (repo_dir(cache) / "refs" / "main").read_text() == C1


def test_fetch_refuses_bad_names_and_unknown_repos(
    tiny: Path, in_process_hub, monkeypatch: pytest.MonkeyPatch
) -> None:
    with LocalHub() as hub:
        hub.repo(HUB_ID).add(C1, tiny)
        cache = in_process_hub(hub.url)
        r = CliRunner()
        cases = {
            ("not a model",): "expected a catalogue name (geneb models list) or a hub id",
            ("DeepGene",): "the catalogue has no checked hub id",
            ("geneb-test/missing",): f"no such model on {hub.url}",
            (HUB_ID, "--revision", "v9"): f"{hub.url} has no such revision",
        }
        for args, message in cases.items():
            res = r.invoke(app, ["models", "fetch", *args])
            out = " ".join(res.output.split())
            assert res.exit_code == 2 and message in out and "Traceback" not in out, out
    assert snapshot_of_cache(cache) == {}


def test_list_names_the_test_fixture_of_each_family(models_dir: Path) -> None:
    """Declared once in the catalogue; shown by `models list` and `--json`. Each fixture is a
    shared model folder; where the catalogue says whether the model ships its own code, the
    fixture's config agrees (checked on the files)."""
    import json

    expected = {  # ../shared/models/families/README.md: which fixture covers which models
        "DNABERT-2": "families/dnabert2-117m-tiny",
        "DNABERT-S": "families/dnabert2-117m-tiny",
        "GENA-LM-large-T2T": "families/gena-lm-bert-t2t-tiny",
        "GENA-LM-base-T2T": "families/gena-lm-bert-t2t-tiny",
        "HyenaDNA-tiny-1K": "real/hyenadna-tiny-1k-anticapt",
        "HyenaDNA-large-1M": "real/hyenadna-tiny-1k-anticapt",
    }
    res = CliRunner().invoke(app, ["models", "list", "--json"])
    listed = {e["name"]: e for e in json.loads(res.output)}
    for name, fixture in expected.items():
        assert listed[name]["test_fixture"] == fixture, name
    for name in ("DNABERT-6", "GENA-LM-bigbird-base-T2T", "Caduceus-Ps-131K", "NT-2.5B-MS"):
        assert listed[name]["test_fixture"] is None, name  # other code paths: none
    for e in listed.values():
        if e["test_fixture"] is not None:
            cfg = json.loads((models_dir / e["test_fixture"] / "config.json").read_text())
            if e["trust_remote_code"] is not None:  # the fixture runs code the way it does
                assert bool(cfg.get("auto_map")) == e["trust_remote_code"], e["name"]
    res = CliRunner().invoke(app, ["models", "list"])
    assert res.exit_code == 0 and "test fixture" in res.output
    lines = res.output.splitlines()
    row = next(ln for ln in lines if ln.startswith("│ DNABERT-2 "))
    assert "families/dnabert2-117m-tiny" in row or "families/dnabert2-117m-" in row
