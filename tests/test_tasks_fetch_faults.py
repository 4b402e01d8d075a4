"""``geneb tasks fetch`` against hostile or absent sources (issue 19, cases 6-10 and 13).

A zip bomb (1 GiB member from a 1 MB download), a server dripping bytes, SIGTERM and SIGKILL
mid-download, a variant table with a fractional position, a task named ``.hidden``, and no
network. Everything is served from 127.0.0.1 by the test; expected values come from the bytes
served here (sizes, line numbers), never from geneb's own output.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import geneb
from geneb.cli import app
from geneb.errors import TaskError
from geneb.tasks.variants import load_variant_task

GIB = 1 << 30
SEQ = "ACGTTGCAAC" * 30  # chrT, 300 bases from 1


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self) -> None:  # noqa: N802 (http.server API)
        srv = self.server
        srv.hits.append(self.path)  # type: ignore[attr-defined]
        route = srv.routes.get(self.path)  # type: ignore[attr-defined]
        if route is None:
            self.send_error(404)
            return
        body, gap, drip_headers = route
        try:
            if drip_headers:  # a status line, then header bytes one by one, forever
                self.wfile.write(b"HTTP/1.0 200 OK\r\n")
                for _ in range(10_000):
                    self.wfile.write(b"X")
                    self.wfile.flush()
                    time.sleep(gap)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if gap is None:
                self.wfile.write(body)
                return
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(gap)
        except (BrokenPipeError, ConnectionResetError):
            return

    def log_message(self, *args: object) -> None:
        pass


class Server:
    """127.0.0.1 file server; a route can drip its body or its headers with a gap (s)."""

    def __init__(self) -> None:
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.routes = {}  # type: ignore[attr-defined]
        self.httpd.hits = []  # type: ignore[attr-defined]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def add(
        self, path: str, body: bytes, gap: float | None = None, drip_headers: bool = False
    ) -> dict:
        self.httpd.routes[path] = (body, gap, drip_headers)  # type: ignore[attr-defined]
        url = f"http://127.0.0.1:{self.httpd.server_port}{path}"
        return {"url": url, "sha256": hashlib.sha256(body).hexdigest()}

    @property
    def hits(self) -> list[str]:
        return self.httpd.hits  # type: ignore[attr-defined]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _task_csv(n: int, seed: int) -> bytes:
    rows = ["sequence,label"]
    for i in range(n):
        s = "".join("ACGT"[(i * 7 + j * (seed + 3)) % 4] for j in range(40))
        rows.append(f"{s},{'ab'[i % 2]}")
    return ("\n".join(rows) + "\n").encode()


def _entry(name: str, files: dict, kind: str = "classification", fmt: str = "csv") -> dict:
    return {
        "name": name,
        "suite": "faults",
        "kind": kind,
        "category": "promoters" if kind == "classification" else None,
        "category_reason": "test entry",
        "source": {"files": files},
        "format": fmt,
        "license": "test",
        "checked": [],
    }


@pytest.fixture()
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    cache = tmp_path / "cache"
    monkeypatch.setenv("GENEB_CACHE", str(cache))
    monkeypatch.delenv("GENEB_DATA_DIR", raising=False)
    for var in ("GENEB_FETCH_MAX_BYTES", "GENEB_FETCH_MAX_RATIO", "GENEB_FETCH_DEADLINE"):
        monkeypatch.delenv(var, raising=False)
    srv = Server()
    good = {
        "train": srv.add("/good/train.csv", _task_csv(40, 1)),
        "test": srv.add("/good/test.csv", _task_csv(20, 2)),
    }
    catalogue = tmp_path / "catalogue.json"
    w = {"srv": srv, "cache": cache, "catalogue": catalogue, "tasks": [_entry("good", good)]}
    w["write"] = lambda: catalogue.write_text(json.dumps({"tasks": w["tasks"]}))
    w["write"]()
    yield w
    srv.stop()


def fetch_cli(world: dict, *args: str):
    world["write"]()
    return CliRunner().invoke(
        app, ["tasks", "fetch", *args, "--catalogue", str(world["catalogue"])]
    )


def files_in(cache: Path) -> dict[str, int]:
    """Every file under the cache with its size (nothing else may be left)."""
    if not cache.exists():
        return {}
    return {p.relative_to(cache).as_posix(): p.stat().st_size for p in cache.rglob("*")
            if p.is_file()}


def leftovers(cache: Path) -> list[str]:
    """Partial folders/downloads (any naming: geneb's ``.partial-``, pooch's ``tmp*``), and
    empty folders."""
    if not cache.exists():
        return []
    out = []
    for p in cache.rglob("*"):
        rel = p.relative_to(cache).as_posix()
        if ".partial-" in rel or p.name.startswith("tmp") or (p.is_dir() and not any(p.iterdir())):
            out.append(rel)
    return out


def one_line_error(result, *needles: str) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "Aborted" not in result.output
    text = " ".join(result.output.split())
    assert text.startswith("error: ") and text.count("error: ") == 1, result.output
    for needle in needles:
        assert needle in text, (needle, result.output)
    return text


# --------------------------------------------------------------------------- case 6: zip bomb


def _bomb_zip(member: str, size: int = GIB) -> bytes:
    """A valid zip whose one deflated member is ``size`` bytes of 'A' (about size/1000 packed).

    Built from one deflate block repeated (byte-aligned by a sync flush; its back-references
    only reach into earlier 'A's), so no gigabyte is compressed here; the CRC is the real one.
    """
    unit = 1 << 20
    block = b"A" * unit
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(block) + c.flush(zlib.Z_SYNC_FLUSH)
    again = c.compress(block) + c.flush(zlib.Z_SYNC_FLUSH)
    data = first + again * (size // unit - 1) + c.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(size // unit):
        crc = zlib.crc32(block, crc)
    name = member.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, crc, len(data), size,
                        len(name), 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0x21, crc,
                          len(data), size, len(name), 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(data),
                      0)
    return local + data + central + end


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return _bomb_zip("GUE/bomb/train.csv")


def test_bomb_zip_is_what_it_claims(bomb: bytes, tmp_path: Path) -> None:
    """The fixture itself, checked with the standard library: 1 GiB declared from ~1 MB."""
    import zipfile

    path = tmp_path / "b.zip"
    path.write_bytes(bomb)
    with zipfile.ZipFile(path) as z:
        (info,) = z.infolist()
        assert info.file_size == GIB and info.compress_size < 1_100_000
        with z.open(info) as f:
            assert f.read(1 << 20) == b"A" * (1 << 20)


def test_zip_member_of_1gib_from_1mb_is_refused_before_unpacking(world: dict, bomb: bytes) -> None:
    src = world["srv"].add("/bomb.zip", bomb)
    test = world["srv"].add("/bomb/test.csv", _task_csv(20, 2))
    world["tasks"].append(
        _entry("bomb", {"train": {**src, "member": "GUE/bomb/train.csv"}, "test": test})
    )
    t0 = time.perf_counter()
    result = fetch_cli(world, "bomb")
    took = time.perf_counter() - t0
    one_line_error(result, "GUE/bomb/train.csv", "declares 1.0 GiB unpacked",
                   "refused before unpacking", "GENEB_FETCH_MAX_RATIO")
    assert took < 10, took  # it never unpacked: today this took minutes and 8.5 GB
    left = files_in(world["cache"])
    assert sum(left.values()) <= len(bomb), left  # only the verified download itself
    assert not (world["cache"] / "tasks" / "bomb").exists() and leftovers(world["cache"]) == []


def test_size_cap_is_overridable_and_names_its_variable(
    world: dict, bomb: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the ratio rule lifted, the absolute cap (set lower here) still refuses the member."""
    src = world["srv"].add("/bomb.zip", bomb)
    test = world["srv"].add("/bomb/test.csv", _task_csv(20, 2))
    world["tasks"].append(
        _entry("bomb", {"train": {**src, "member": "GUE/bomb/train.csv"}, "test": test})
    )
    monkeypatch.setenv("GENEB_FETCH_MAX_RATIO", "1e9")
    monkeypatch.setenv("GENEB_FETCH_MAX_BYTES", "256M")
    one_line_error(fetch_cli(world, "bomb"), "over 256.0 MiB", "GENEB_FETCH_MAX_BYTES raises it")
    monkeypatch.setenv("GENEB_FETCH_MAX_BYTES", "lots")
    one_line_error(fetch_cli(world, "bomb"), "GENEB_FETCH_MAX_BYTES: expected a size", "'lots'")
    monkeypatch.setenv("GENEB_FETCH_MAX_BYTES", "1G")
    monkeypatch.setenv("GENEB_FETCH_DEADLINE", "-1")
    one_line_error(fetch_cli(world, "bomb"), "GENEB_FETCH_DEADLINE: expected a positive number")
    assert world["srv"].hits.count("/bomb.zip") == 1  # downloaded once, verified, then reused


def test_gzip_without_a_size_header_is_stopped_while_streaming(tmp_path: Path) -> None:
    """gzip declares no size: only the streamed bytes can show a bomb; nothing is kept."""
    from geneb.tasks.convert import gunzip
    from geneb.tasks.limits import FetchLimits

    packed = tmp_path / "x.fa.gz"
    with gzip.open(packed, "wb", compresslevel=9) as f:
        for _ in range(80):
            f.write(b"N" * (1 << 20))  # 80 MiB from ~80 KB: ratio ~1000, past the 64 MiB floor
    out = tmp_path / "x.fa"
    with pytest.raises(TaskError, match=r"x\.fa\.gz: unpacks to more than 64\.0 MiB"):
        gunzip(packed, out, FetchLimits(max_ratio=100))
    assert not out.exists()
    with pytest.raises(TaskError, match=r"unpacks to more than 8\.0 MiB .*fetch size cap"):
        gunzip(packed, out, FetchLimits(max_bytes=8 << 20))
    assert not out.exists()
    gunzip(packed, out, FetchLimits(max_ratio=2000))  # raised: the same file unpacks whole
    assert out.stat().st_size == 80 << 20


def test_variant_reference_gz_over_the_cap_is_refused_then_fetched_when_raised(
    world: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    ref = f">chrT\n{SEQ}\n>pad\n".encode() + b"N" * (6 << 20) + b"\n"
    rows = "chrom,pos,ref,alt,label\n" + "".join(
        f"chrT,{p},{SEQ[p - 1]},{'A' if SEQ[p - 1] != 'A' else 'C'},{p % 2}\n" for p in range(1, 30)
    )
    files = {
        "variants": world["srv"].add("/v/variants.csv", rows.encode()),
        "reference": world["srv"].add("/v/reference.fa.gz", gzip.compress(ref)),
    }
    world["tasks"].append(_entry("vbig", files, kind="variants", fmt="variants_table"))
    monkeypatch.setenv("GENEB_FETCH_MAX_BYTES", "4M")
    one_line_error(fetch_cli(world, "vbig"), "reference.fa.gz: unpacks to more than 4.0 MiB")
    assert leftovers(world["cache"]) == [] and not (world["cache"] / "variants" / "vbig").exists()
    monkeypatch.setenv("GENEB_FETCH_MAX_BYTES", "16M")
    ok = fetch_cli(world, "vbig")
    assert ok.exit_code == 0, ok.output
    assert (world["cache"] / "variants" / "vbig" / "reference.fa").read_bytes() == ref


def test_tar_member_declaring_more_than_the_cap_is_refused_before_unpacking(
    tmp_path: Path,
) -> None:
    import io
    import tarfile

    from geneb.tasks.convert import extract_member
    from geneb.tasks.limits import FetchLimits

    archive = tmp_path / "a.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        for name, size in (("small.csv", 10), ("big.csv", 3 << 20)):
            info = tarfile.TarInfo(name)
            info.size = size
            t.addfile(info, io.BytesIO(b"A" * size))
    out = tmp_path / "big.csv"
    limits = FetchLimits(max_bytes=2 << 20)
    with pytest.raises(TaskError, match=r"'big.csv': declares 3\.0 MiB unpacked, over 2\.0 MiB"):
        extract_member(archive, "big.csv", out, limits)
    assert not out.exists()
    assert extract_member(archive, "small.csv", tmp_path / "s.csv", limits).read_bytes() == (
        b"A" * 10
    )


def test_url_source_without_network_is_one_line_and_leaves_nothing(world: dict) -> None:
    port = _closed_port()
    dead = {"url": f"http://127.0.0.1:{port}/train.csv", "sha256": "a" * 64}
    test = world["tasks"][0]["source"]["files"]["test"]
    world["tasks"].append(_entry("dead", {"train": dead, "test": test}))
    t0 = time.perf_counter()
    one_line_error(fetch_cli(world, "dead"), f"127.0.0.1:{port}/train.csv: download failed",
                   "offline, or the server is down?", "nothing was kept")
    assert time.perf_counter() - t0 < 2
    assert not world["cache"].exists()


# --------------------------------------------------------------------------- case 7: drip


def test_dripping_server_hits_the_per_file_deadline(
    world: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    drip = world["srv"].add("/drip/train.csv", _task_csv(40, 1), gap=0.5)
    world["tasks"].append(_entry("drip", {"train": drip, "test": world["tasks"][0]["source"][
        "files"]["test"]}))
    monkeypatch.setenv("GENEB_FETCH_DEADLINE", "2")
    t0 = time.perf_counter()
    result = fetch_cli(world, "drip")
    took = time.perf_counter() - t0
    one_line_error(result, "/drip/train.csv", "not complete after 2 s", "GENEB_FETCH_DEADLINE")
    assert 2 <= took < 6, took
    assert leftovers(world["cache"]) == [] and files_in(world["cache"]) == {}


def test_server_dripping_its_headers_hits_the_deadline_too(
    world: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = world["srv"].add("/hdr/train.csv", b"", gap=0.3, drip_headers=True)
    test = world["tasks"][0]["source"]["files"]["test"]
    world["tasks"].append(_entry("hdr", {"train": slow, "test": test}))
    monkeypatch.setenv("GENEB_FETCH_DEADLINE", "1.5")
    t0 = time.perf_counter()
    one_line_error(fetch_cli(world, "hdr"), "/hdr/train.csv", "not complete after 1.5 s")
    assert time.perf_counter() - t0 < 5
    assert leftovers(world["cache"]) == []


# --------------------------------------------------------------------------- case 8: signals


def _start_slow_fetch(world: dict) -> subprocess.Popen:
    slow = world["srv"].add("/slow/train.csv", _task_csv(400, 1), gap=0.05)
    test = world["tasks"][0]["source"]["files"]["test"]
    world["tasks"].append(_entry("slow", {"train": slow, "test": test}))
    world["write"]()
    env = dict(os.environ, PYTHONPATH=str(Path(geneb.__file__).resolve().parents[1]))
    downloads = world["cache"] / "downloads"
    before = set(downloads.iterdir()) if downloads.is_dir() else set()
    proc = subprocess.Popen(
        [sys.executable, "-m", "geneb", "tasks", "fetch", "slow", "--catalogue",
         str(world["catalogue"])],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        cwd=world["cache"].parent,  # not the checkout: `-m` would import geneb from the cwd
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until it is mid-download: a new (partial) file exists
        if downloads.is_dir() and set(downloads.iterdir()) - before:
            time.sleep(0.3)
            return proc
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    pytest.fail(f"the fetch never started downloading: {proc.communicate()[0]!r}")


def test_sigterm_mid_fetch_leaves_nothing(world: dict) -> None:
    proc = _start_slow_fetch(world)
    assert any(".partial-" in p.name for p in (world["cache"] / "tasks").iterdir())
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM, out
    assert b"Traceback" not in out
    assert leftovers(world["cache"]) == [] and files_in(world["cache"]) == {}


def test_partials_of_a_killed_fetch_are_swept_by_the_next_fetch(world: dict) -> None:
    assert fetch_cli(world, "good").exit_code == 0
    proc = _start_slow_fetch(world)
    proc.kill()  # SIGKILL: no handler runs; its partial folder and download stay
    proc.communicate(timeout=30)  # reaped: its pid is gone
    assert leftovers(world["cache"]) != []
    result = fetch_cli(world, "good")  # any later fetch into the same cache, even a no-op
    assert result.exit_code == 0 and "already fetched" in result.output, result.output
    assert leftovers(world["cache"]) == []
    kept = files_in(world["cache"])
    assert {p for p in kept if not p.startswith(("downloads/", "audit/"))} == {
        f"tasks/good/{n}" for n in ("fetch.json", "task.json", "test.csv", "train.csv")
    }
    served = {hashlib.sha256(b).hexdigest()[:16] for b, _, _ in world["srv"].httpd.routes.values()}
    assert all(Path(p).name.split("-")[0] in served for p in kept if p.startswith("downloads/"))
    assert kept["downloads/" + next(p for p in os.listdir(world["cache"] / "downloads")
                                     if p.endswith("test.csv"))] > 0


def test_a_live_fetchs_partial_is_not_swept(world: dict) -> None:
    """Two fetches into one cache: the sweep spares partials whose process still runs."""
    proc = _start_slow_fetch(world)
    try:
        before = sorted(p.name for p in (world["cache"] / "tasks").iterdir())
        assert fetch_cli(world, "good").exit_code == 0
        after = {p.name for p in (world["cache"] / "tasks").iterdir()}
        assert set(before) <= after
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    assert leftovers(world["cache"]) == []


# --------------------------------------------------------------------------- case 9: positions


def test_fractional_position_is_refused_by_fetch_as_by_direct_load(
    world: dict, tmp_path: Path
) -> None:
    rows = ["chrom,pos,ref,alt,label"]
    for p in (10, 20, 30, 40):
        ref = SEQ[p - 1]
        rows.append(f"chrT,{p if p != 30 else '30.9'},{ref},{'A' if ref != 'A' else 'C'},1")
    table = ("\n".join(rows) + "\n").encode()
    reference = f">chrT\n{SEQ}\n".encode()
    files = {
        "variants": world["srv"].add("/frac/variants.csv", table),
        "reference": world["srv"].add("/frac/reference.fa", reference),
    }
    world["tasks"].append(_entry("frac", files, kind="variants", fmt="variants_table"))
    # the refusal, as the direct load of the same table words it (row 3 = file line 4)
    expected = "line 4 (row 2): pos '30.9' is not a 1-based position (expected an integer >= 1)"
    folder = tmp_path / "direct"
    folder.mkdir()
    (folder / "variants.csv").write_bytes(table)
    (folder / "reference.fa").write_bytes(reference)
    with pytest.raises(TaskError) as direct:
        load_variant_task(folder)
    assert expected in str(direct.value)
    text = one_line_error(fetch_cli(world, "frac"), f"variants.csv {expected}")
    assert "nothing was cached" in text
    assert not (world["cache"] / "variants" / "frac").exists()
    assert leftovers(world["cache"]) == []


def test_fetched_variants_keep_integer_positions_exactly(world: dict) -> None:
    rows = ["chrom,pos,ref,alt,label,score"]
    for p in (1, 150, 300):
        ref = SEQ[p - 1]
        rows.append(f"chrT,{p},{ref},{'A' if ref != 'A' else 'C'},{p % 2},0.5")
    files = {
        "variants": world["srv"].add("/int/variants.csv", ("\n".join(rows) + "\n").encode()),
        "reference": world["srv"].add("/int/reference.fa", f">chrT\n{SEQ}\n".encode()),
    }
    world["tasks"].append(_entry("ints", files, kind="variants", fmt="variants_table"))
    assert fetch_cli(world, "ints").exit_code == 0
    got = pd.read_csv(world["cache"] / "variants" / "ints" / "variants.csv")
    assert got["pos"].tolist() == [1, 150, 300] and got["label"].tolist() == [1, 0, 0]


# --------------------------------------------------------------------------- case 10: names


@pytest.mark.parametrize("name", [".hidden", "~home", "..", "a\tb"])
def test_hidden_or_unprintable_catalogue_names_are_refused(world: dict, name: str) -> None:
    world["tasks"].append(_entry(name, world["tasks"][0]["source"]["files"]))
    text = one_line_error(fetch_cli(world, name), f"invalid task name {name!r}")
    assert "catalogue.json entry 2" in text
    assert world["srv"].hits == [] and not world["cache"].exists()


def test_task_folder_named_hidden_in_task_json_is_refused_by_the_same_rule(
    tmp_path: Path,
) -> None:
    from geneb.tasks.loader import load_task_folder

    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "train.csv").write_bytes(_task_csv(20, 1))
    (folder / "test.csv").write_bytes(_task_csv(10, 2))
    (folder / "task.json").write_text(json.dumps({"name": ".hidden"}))
    with pytest.raises(TaskError, match=r"invalid task name '\.hidden'"):
        load_task_folder(folder)


# --------------------------------------------------------------------------- case 13: offline


def _hub_catalogue(tmp_path: Path) -> Path:
    entry = {
        "name": "hub_h3",
        "suite": "hubfaults",
        "kind": "classification",
        "category": "promoters",
        "category_reason": "test",
        "source": {
            "hub": "someorg/nt",
            "revision": "0123456789abcdef0123456789abcdef01234567",
            "files": {"train": "H3/train.fna", "test": "H3/test.fna"},
        },
        "format": "fasta_label_in_id",
        "license": "test",
        "checked": [],
    }
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"tasks": [entry]}))
    return path


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_offline_by_hf_hub_offline_is_one_line_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants as hf

    monkeypatch.setattr(hf, "HF_HUB_OFFLINE", True)
    cache = tmp_path / "cache"
    monkeypatch.setenv("GENEB_CACHE", str(cache))
    for args in (["nt_h3"], ["hub_h3", "--catalogue", str(_hub_catalogue(tmp_path))]):
        t0 = time.perf_counter()
        result = CliRunner().invoke(app, ["tasks", "fetch", *args])
        took = time.perf_counter() - t0
        one_line_error(result, "offline (HF_HUB_OFFLINE is set)", "/H3/train.fna"[1:],
                       "nothing was downloaded")
        assert took < 2, took
        assert not cache.exists()


def test_offline_by_closed_endpoint_is_one_line_within_2s_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import huggingface_hub.constants as hf

    endpoint = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setattr(hf, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(hf, "ENDPOINT", endpoint)
    cache = tmp_path / "cache"
    monkeypatch.setenv("GENEB_CACHE", str(cache))
    t0 = time.perf_counter()
    result = CliRunner().invoke(
        app, ["tasks", "fetch", "hub_h3", "--catalogue", str(_hub_catalogue(tmp_path))]
    )
    took = time.perf_counter() - t0
    one_line_error(result, f"offline: no answer from the Hugging Face hub at {endpoint}",
                   "someorg/nt@0123456789ab:H3/train.fna")
    assert took < 2, took
    assert not cache.exists()


def test_offline_endpoint_from_the_environment_in_a_fresh_process(tmp_path: Path) -> None:
    """The user's way: HF_ENDPOINT on a closed port, HF_HUB_OFFLINE unset."""
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    offline = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")  # either makes the hub offline
    env = {k: v for k, v in os.environ.items() if k not in offline}
    env.update(
        HF_ENDPOINT=endpoint,
        GENEB_CACHE=str(tmp_path / "cache"),
        PYTHONPATH=str(Path(geneb.__file__).resolve().parents[1]),
    )
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "geneb", "tasks", "fetch", "nt_h3"],
        env=env, capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    took = time.perf_counter() - t0
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    text = " ".join(proc.stderr.split())
    assert lines[0].startswith("error: offline: no answer") and endpoint in text, proc.stderr
    assert "Retrying" not in proc.stderr and proc.stdout == ""
    assert took < 15, took  # interpreter start included; today: ~25 s of retries
    assert not (tmp_path / "cache").exists()
