"""``geneb tasks fetch`` against a local HTTP server and a hub-layout cache (no network).

The served files are built here from ``../shared/data`` and ``../shared/variants`` in the
formats the real sources use (a GUE-style zip of csv files, an NT-style FASTA with the label in
the record id, a variant table + reference); a test catalogue points at them with their sha256.
Expected contents come from reading the originals with pandas, not from geneb.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import socket
import stat
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from geneb.cli import app
from geneb.errors import UnknownNameError
from geneb.tasks.catalogue import load_task_catalogue, select
from geneb.tasks.fetch import FetchError, plan_fetch, run_fetch
from geneb.tasks.folders import resolve_task

PROM = "gue_prom_300_tata"
METHYL = "methyl_4mc_c_equisetifolia"


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        srv = self.server
        srv.hits.append(self.path)  # type: ignore[attr-defined]
        body = srv.files.get(self.path)  # type: ignore[attr-defined]
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path in srv.cut:  # type: ignore[attr-defined]
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class Server:
    """A file server on 127.0.0.1 with a request log and paths that break mid-body."""

    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.files = {}  # type: ignore[attr-defined]
        self.httpd.cut = set()  # type: ignore[attr-defined]
        self.httpd.hits = []  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.running = True

    def add(self, path: str, body: bytes, *, cut: bool = False) -> tuple[str, str]:
        self.httpd.files[path] = body  # type: ignore[attr-defined]
        if cut:
            self.httpd.cut.add(path)  # type: ignore[attr-defined]
        return f"http://127.0.0.1:{self.httpd.server_port}{path}", hashlib.sha256(body).hexdigest()

    @property
    def hits(self) -> list[str]:
        return self.httpd.hits  # type: ignore[attr-defined]

    def stop(self) -> None:
        if self.running:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.running = False


def _entry(name: str, suite: str, files: dict, fmt: str, **extra: object) -> dict:
    return {
        "name": name,
        "suite": suite,
        "kind": extra.pop("kind", "classification"),
        "category": extra.pop("category", "promoters"),
        "category_reason": "test entry",
        "source": {"files": files},
        "format": fmt,
        "license": "test",
        "n_classes": extra.pop("n_classes", None),
        "checked": [],
        **extra,
    }


@pytest.fixture()
def world(tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """A served set of sources, a test catalogue naming them, and an empty cache."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("GENEB_CACHE", str(cache))
    monkeypatch.delenv("GENEB_DATA_DIR", raising=False)
    srv = Server()

    # GUE-style: one zip holding <task>/train.csv and test.csv
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for split in ("train", "test"):
            z.write(data_dir / PROM / f"{split}.csv", f"GUE/{PROM}/{split}.csv")
    zurl, zsha = srv.add("/GUE.zip", buf.getvalue())

    # NT-style: FASTA records '>name|label'
    fna = {}
    for split in ("train", "test"):
        df = pd.read_csv(data_dir / METHYL / f"{split}.csv")
        text = "".join(
            f">{split}{i}|{lab}\n{seq}\n"
            for i, (seq, lab) in enumerate(zip(df["sequence"], df["label"], strict=True))
        )
        fna[split] = srv.add(f"/nt/{split}.fna", text.encode())

    # variants: the BRCA1 table and reference as served files
    var_dir = data_dir.parent / "variants" / "brca1_findlay2018"
    vurl, vsha = srv.add("/brca1/variants.csv", (var_dir / "variants.csv").read_bytes())
    rurl, rsha = srv.add("/brca1/reference.fa", (var_dir / "reference.fa").read_bytes())

    body = (data_dir / PROM / "train.csv").read_bytes()
    cut_url, cut_sha = srv.add("/cut/train.csv", body, cut=True)
    bad_url, _ = srv.add("/bad/train.csv", body)
    turl, tsha = srv.add("/ok/test.csv", (data_dir / PROM / "test.csv").read_bytes())

    def member(m: str) -> dict:
        return {"url": zurl, "sha256": zsha, "member": m}

    tasks = [
        _entry(
            "loc_prom",
            "loc",
            {"train": member(f"GUE/{PROM}/train.csv"), "test": member(f"GUE/{PROM}/test.csv")},
            "csv",
            n_classes=2,
        ),
        _entry(
            "loc_methyl",
            "loc",
            {s: {"url": u, "sha256": h} for s, (u, h) in fna.items()},
            "fasta_label_in_id",
            category="dna_methylation",
        ),
        _entry(
            "loc_brca1",
            "locvar",
            {"variants": {"url": vurl, "sha256": vsha}},
            "variants_table",
            kind="variants",
            category=None,
        ),
        _entry(
            "loc_corrupt",
            "broken",
            {"train": {"url": bad_url, "sha256": "0" * 64}, "test": {"url": turl, "sha256": tsha}},
            "csv",
        ),
        _entry(
            "loc_cut",
            "broken",
            {"train": {"url": cut_url, "sha256": cut_sha}, "test": {"url": turl, "sha256": tsha}},
            "csv",
        ),
        _entry(
            "loc_unpinned",
            "loc",
            {"train": {"url": turl, "sha256": None}, "test": {"url": turl, "sha256": tsha}},
            "csv",
        ),
    ]
    tasks[2]["source"]["reference"] = {"url": rurl, "sha256": rsha}
    catalogue = tmp_path / "catalogue.json"
    catalogue.write_text(json.dumps({"tasks": tasks}))
    yield {"srv": srv, "cache": cache, "catalogue": str(catalogue), "var_dir": var_dir}
    srv.stop()


def fetch_cli(world: dict, *args: str):
    return CliRunner().invoke(app, ["tasks", "fetch", *args, "--catalogue", world["catalogue"]])


def leftovers(cache: Path) -> list[str]:
    """Everything under the cache that is not a completed fetch or a verified download."""
    out = []
    for p in cache.rglob("*"):
        rel = p.relative_to(cache).as_posix()
        if ".partial-" in rel or p.name.startswith("tmp"):
            out.append(rel)
    return out


def test_fetch_converts_verifies_and_resolves(world: dict, data_dir: Path) -> None:
    result = fetch_cli(world, "loc_prom")
    assert result.exit_code == 0, result.output
    folder = world["cache"] / "tasks" / "loc_prom"
    umask = os.umask(0)
    os.umask(umask)
    for p in [folder, *folder.iterdir()]:  # a shared cache stays readable by the team
        expected = (0o777 if p.is_dir() else 0o666) & ~umask
        assert stat.S_IMODE(p.stat().st_mode) == expected, p
    assert sorted(p.name for p in folder.iterdir()) == [
        "fetch.json",
        "task.json",
        "test.csv",
        "train.csv",
    ]
    record = json.loads((folder / "fetch.json").read_text())
    assert record["rows"] == {"train": 4904, "test": 613}
    task = resolve_task("loc_prom")  # by name, from $GENEB_CACHE
    for split in ("train", "test"):
        ref = pd.read_csv(data_dir / PROM / f"{split}.csv")
        assert task.split(split).sequences == tuple(ref["sequence"])
        np.testing.assert_array_equal(task.split(split).labels, ref["label"].to_numpy())
    assert task.spec.category == "promoters"
    meta = json.loads((folder / "task.json").read_text())
    assert (meta["n_classes"], meta["n_train"], meta["n_test"]) == (2, 4904, 613)
    assert world["srv"].hits == ["/GUE.zip"]  # one archive, downloaded once for both splits


def test_second_fetch_is_a_no_op_and_offline_rerun_resolves(world: dict) -> None:
    assert fetch_cli(world, "loc_prom").exit_code == 0
    n = len(world["srv"].hits)
    again = fetch_cli(world, "loc_prom")
    assert again.exit_code == 0 and "skip" in again.output and "already fetched" in again.output
    assert len(world["srv"].hits) == n
    world["srv"].stop()  # offline from here
    assert fetch_cli(world, "loc_prom").exit_code == 0
    show = CliRunner().invoke(app, ["tasks", "show", "loc_prom", "--json"])
    assert show.exit_code == 0, show.output
    assert json.loads(show.output)["splits"]["train"]["rows"] == 4904
    listed = CliRunner().invoke(app, ["tasks", "list"])
    assert "loc_prom" in listed.output


def test_corrupt_download_is_refused_and_nothing_is_left(world: dict) -> None:
    result = fetch_cli(world, "loc_corrupt")
    assert result.exit_code == 2
    flat = " ".join(result.output.split())
    assert "error:" in flat and "/bad/train.csv" in flat and "does not match" in flat
    assert "0" * 64 in flat and "Traceback" not in result.output
    assert not (world["cache"] / "tasks" / "loc_corrupt").exists()
    assert leftovers(world["cache"]) == []
    downloads = world["cache"] / "downloads"
    assert not downloads.exists() or not any(
        p.name.endswith("train.csv") for p in downloads.iterdir()
    )


def test_interrupted_download_leaves_nothing_and_says_what_failed(world: dict) -> None:
    result = fetch_cli(world, "loc_cut")
    assert result.exit_code == 2
    flat = " ".join(result.output.split())
    assert "/cut/train.csv" in flat and "download failed" in flat and "nothing was kept" in flat
    assert not (world["cache"] / "tasks" / "loc_cut").exists()
    assert leftovers(world["cache"]) == []
    downloads = world["cache"] / "downloads"
    assert not downloads.exists() or not any("train.csv" in p.name for p in downloads.iterdir())


def test_unpinned_entry_is_refused_before_any_download(world: dict) -> None:
    result = fetch_cli(world, "loc")  # a suite: loc_prom, loc_methyl, loc_unpinned
    assert result.exit_code == 2
    flat = " ".join(result.output.split())
    assert "loc_unpinned: unverifiable" in flat and "no sha256" in flat
    assert "nothing was downloaded" in flat
    assert world["srv"].hits == []
    assert not (world["cache"] / "tasks").exists()
    ok = fetch_cli(world, "loc", "--skip-refused")
    assert ok.exit_code == 0, ok.output
    assert "refuse  loc_unpinned" in ok.output
    assert {p.name for p in (world["cache"] / "tasks").iterdir()} == {"loc_prom", "loc_methyl"}


def test_nt_style_fasta_labels_round_trip(world: dict, data_dir: Path) -> None:
    assert fetch_cli(world, "loc_methyl").exit_code == 0
    task = resolve_task("loc_methyl")
    for split in ("train", "test"):
        ref = pd.read_csv(data_dir / METHYL / f"{split}.csv")
        assert task.split(split).sequences == tuple(ref["sequence"])
        np.testing.assert_array_equal(task.split(split).labels, ref["label"].to_numpy())


def test_variant_set_gets_the_variant_folder_layout(world: dict) -> None:
    result = fetch_cli(world, "loc_brca1")
    assert result.exit_code == 0, result.output
    folder = world["cache"] / "variants" / "loc_brca1"
    got = pd.read_csv(folder / "variants.csv")
    ref = pd.read_csv(world["var_dir"] / "variants.csv")
    assert list(got.columns[:6]) == ["chrom", "pos", "ref", "alt", "label", "score"]
    pd.testing.assert_frame_equal(got[ref.columns], ref)
    assert (folder / "reference.fa").read_bytes() == (
        world["var_dir"] / "reference.fa"
    ).read_bytes()


def test_dry_run_downloads_nothing(world: dict) -> None:
    result = fetch_cli(world, "loc", "--dry-run")
    assert result.exit_code == 0
    assert "fetch   loc_prom" in result.output and "refuse  loc_unpinned" in result.output
    assert world["srv"].hits == [] and not world["cache"].exists()


def test_train_over_the_cap_is_subsampled_at_load_and_recorded(world: dict, data_dir: Path) -> None:
    """The fetched folder keeps every row; loading applies GENEB's 100,000-row cap as today."""
    base = pd.read_csv(data_dir / "methyl_4mc_f_vesca" / "train.csv")
    big = pd.concat([base] * 7, ignore_index=True).iloc[:100_050]
    url, sha = world["srv"].add("/big/train.csv", big.to_csv(index=False).encode())
    turl, tsha = world["srv"].add(
        "/big/test.csv", (data_dir / "methyl_4mc_f_vesca" / "test.csv").read_bytes()
    )
    cat = json.loads(Path(world["catalogue"]).read_text())
    cat["tasks"].append(
        _entry(
            "loc_big",
            "big",
            {"train": {"url": url, "sha256": sha}, "test": {"url": turl, "sha256": tsha}},
            "csv",
        )
    )
    Path(world["catalogue"]).write_text(json.dumps(cat))
    assert fetch_cli(world, "loc_big").exit_code == 0
    record = json.loads((world["cache"] / "tasks" / "loc_big" / "fetch.json").read_text())
    assert record["rows"]["train"] == 100_050
    assert record["subsampled_at_load"]["train"]["kept_rows"] == 100_000
    task = resolve_task("loc_big")
    assert len(task.split("train")) == 100_000
    assert task.metadata["subsampled"]["train"]["original_rows"] == 100_050


# --------------------------------------------------------------------------- hub datasets

REV = "0123456789abcdef0123456789abcdef01234567"


def test_hub_dataset_resolves_from_a_hub_layout_cache_offline(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache folder laid out like the hub's; HF_HUB_OFFLINE=1 (conftest) so nothing is asked."""
    import huggingface_hub.constants as hf_constants

    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)
    cache = tmp_path / "cache"
    monkeypatch.setenv("GENEB_CACHE", str(cache))
    snap = cache / "hf" / "datasets--someorg--gue" / "snapshots" / REV / "GUE" / "prom"
    snap.mkdir(parents=True)
    for split in ("train", "test"):
        (snap / f"{split}.csv").write_bytes((data_dir / PROM / f"{split}.csv").read_bytes())
    hub_entry = {
        "name": "hub_prom",
        "suite": "hubsuite",
        "kind": "classification",
        "category": "promoters",
        "category_reason": "test",
        "source": {
            "hub": "someorg/gue",
            "revision": REV,
            "files": {"train": "GUE/prom/train.csv", "test": "GUE/prom/test.csv"},
        },
        "format": "csv",
        "license": None,
        "checked": [],
    }
    missing = dict(
        hub_entry,
        name="hub_missing",
        source=dict(
            hub_entry["source"], files={"train": "GUE/nope/train.csv", "test": "GUE/prom/test.csv"}
        ),
    )
    catalogue = tmp_path / "c.json"
    catalogue.write_text(json.dumps({"tasks": [hub_entry, missing]}))
    entries = load_task_catalogue(catalogue)
    run_fetch(plan_fetch(select(["hub_prom"], entries)))
    task = resolve_task("hub_prom")
    ref = pd.read_csv(data_dir / PROM / "test.csv")
    assert task.split("test").sequences == tuple(ref["sequence"])
    assert json.loads((cache / "tasks" / "hub_prom" / "fetch.json").read_text())["source"] == (
        f"hf:someorg/gue@{REV}"
    )
    with pytest.raises(FetchError, match=r"someorg/gue@0123.*GUE/nope/train.csv"):
        run_fetch(plan_fetch(select(["hub_missing"], entries)))
    assert not (cache / "tasks" / "hub_missing").exists()
    assert leftovers(cache) == []


def test_not_fetched_catalogue_task_names_the_fetch_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GENEB_CACHE", str(tmp_path / "empty"))
    monkeypatch.delenv("GENEB_DATA_DIR", raising=False)
    with pytest.raises(UnknownNameError, match="run: geneb tasks fetch nt_h3k4me3"):
        resolve_task("nt_h3k4me3")
    with pytest.raises(UnknownNameError, match="cannot be fetched .geneb has no converter"):
        resolve_task("lrb_regulatory_element_promoter")  # no converter for its format
    # no revision published: fetchable at the hub's current commit (recorded when fetched)
    with pytest.raises(UnknownNameError, match="run: geneb tasks fetch gb_human_enhancers_ens"):
        resolve_task("gb_human_enhancers_ensembl")


def test_ctrl_c_during_conversion_leaves_nothing(
    world: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    import geneb.tasks.fetch as fetch_mod

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    original = fetch_mod.convert_classification
    monkeypatch.setattr(fetch_mod, "convert_classification", interrupted)
    plan = plan_fetch(select(["loc_prom"], load_task_catalogue(world["catalogue"])))
    with pytest.raises(KeyboardInterrupt):
        run_fetch(plan)
    assert not (world["cache"] / "tasks" / "loc_prom").exists()
    assert leftovers(world["cache"]) == []
    monkeypatch.setattr(fetch_mod, "convert_classification", original)
    assert fetch_cli(world, "loc_prom").exit_code == 0  # a later fetch completes normally
    assert (world["cache"] / "tasks" / "loc_prom" / "fetch.json").is_file()
