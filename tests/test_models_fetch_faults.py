"""`geneb models fetch` against a hub that lies, drips, floods or is interrupted (issue 28,
cases 7-10): tampered bytes are refused against the hub's own checksums (LFS sha256, git blob
sha1), the fetch size cap and the deadline and silence timeout apply while the bytes arrive,
and Ctrl-C, SIGTERM and SIGHUP stop a download within 1 s with the cache exactly as before.

The hub is the local server of ``_local_hub.py`` on 127.0.0.1; references are the source
files' bytes (hashlib) and the cache as it was before the fetch (a byte-for-byte listing).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _local_hub import LocalHub
from test_models_fetch import (  # noqa: F401 - fixtures too
    C1,
    C2,
    HUB_ID,
    env_for,
    in_process_hub,
    repo_dir,
    snapshot_of_cache,
    tiny,
)
from typer.testing import CliRunner

from geneb.cli import app

pytest.importorskip("huggingface_hub")
WEIGHTS = "model.safetensors"


def fetch(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["models", "fetch", HUB_ID, *args])
    return res.exit_code, " ".join(res.output.split())


def one_line_refusal(code: int, out: str, *needles: str) -> None:
    assert code == 2 and "Traceback" not in out and out.count("error:") == 1, out
    for n in needles:
        assert n in out, out


@pytest.fixture
def fetched_c1(tiny: Path, in_process_hub):  # noqa: F811
    """A hub whose main is C1, fetched once; then main moves to C2 (new weights)."""
    with LocalHub() as hub:
        repo = hub.repo(HUB_ID)
        repo.add(C1, tiny)
        cache = in_process_hub(hub.url)
        assert fetch()[0] == 0
        new = {WEIGHTS: (tiny / WEIGHTS).read_bytes()[::-1], "extra.txt": b"a file new in C2\n"}
        repo.add(C2, tiny, **new)
        yield hub, repo, cache


@pytest.mark.parametrize("name", [WEIGHTS, "extra.txt"])  # LFS sha256, git blob sha1
def test_tampered_bytes_are_refused_and_nothing_kept(name: str, fetched_c1) -> None:
    hub, repo, cache = fetched_c1
    before = snapshot_of_cache(cache)
    listed = repo.commits[C2][name]
    flipped = bytearray(listed)
    flipped[len(flipped) // 2] ^= 0x01  # same size, one bit: only a checksum sees it
    repo.served[name] = bytes(flipped)
    code, out = fetch()
    one_line_refusal(code, out, name, "nothing was kept" if name != WEIGHTS else "discarded")
    assert "hub's" in out
    assert snapshot_of_cache(cache) == before
    assert (repo_dir(cache) / "refs" / "main").read_text() == C1


def test_a_tampered_cached_blob_is_downloaded_again(fetched_c1, tiny: Path) -> None:  # noqa: F811
    hub, repo, cache = fetched_c1
    repo.commits.pop(C2)
    repo.branches["main"] = C1
    blob = (repo_dir(cache) / "snapshots" / C1 / WEIGHTS).resolve()
    blob.write_bytes(b"\0" * blob.stat().st_size)  # the name still says the old sha256
    code, out = fetch()
    assert code == 0, out
    assert blob.read_bytes() == (tiny / WEIGHTS).read_bytes()


def refused_as_before(cache: Path, *needles: str) -> float:
    """Fetch; assert a one-line refusal naming ``needles`` and the cache exactly as before;
    return the seconds it took."""
    before = snapshot_of_cache(cache)
    t0 = time.perf_counter()
    code, out = fetch()
    secs = time.perf_counter() - t0
    one_line_refusal(code, out, *needles)
    assert snapshot_of_cache(cache) == before
    return secs


def test_size_cap_refuses_before_any_byte(fetched_c1, monkeypatch: pytest.MonkeyPatch) -> None:
    hub, repo, cache = fetched_c1
    repo.huge[WEIGHTS] = 48 * 1024**2  # listed (and served) as 48 MiB
    monkeypatch.setenv("GENEB_FETCH_MAX_BYTES", "16M")
    hub.requests.clear()
    refused_as_before(cache, WEIGHTS, "48.0 MiB", "16.0 MiB", "GENEB_FETCH_MAX_BYTES")
    assert not any("/resolve/" in p for _, p in hub.requests), hub.requests


def test_size_cap_holds_when_the_metadata_lies(fetched_c1, monkeypatch) -> None:
    hub, repo, cache = fetched_c1
    repo.huge[WEIGHTS] = 40 * 1024**2  # served as 40 MiB ...
    repo.declared[WEIGHTS] = 3000  # ... listed as 3 kB
    monkeypatch.setenv("GENEB_FETCH_MAX_BYTES", "5M")
    refused_as_before(cache, WEIGHTS, "5.0 MiB")


def test_a_dripping_server_meets_the_deadline(fetched_c1, monkeypatch) -> None:
    hub, repo, cache = fetched_c1
    repo.drip[WEIGHTS] = (48, 0.4)  # never silent for long, never done
    monkeypatch.setenv("GENEB_FETCH_DEADLINE", "2.5")
    secs = refused_as_before(cache, WEIGHTS, "2.5 s", "GENEB_FETCH_DEADLINE")
    assert secs < 5.0, secs


def test_a_silent_server_meets_the_silence_timeout(fetched_c1, monkeypatch) -> None:
    import geneb.tasks.download as download

    hub, repo, cache = fetched_c1
    repo.drip[WEIGHTS] = (100, 30.0)  # 100 bytes, then silence
    monkeypatch.setattr(download, "READ_TIMEOUT_S", 1.5)
    secs = refused_as_before(cache, WEIGHTS, "download failed")
    assert secs < 4.0, secs


def _wait_for(cond, timeout: float = 60.0) -> None:
    t0 = time.perf_counter()
    while not cond():
        assert time.perf_counter() - t0 < timeout, "timed out"
        time.sleep(0.05)


@pytest.mark.slow  # a fresh process per signal (interpreter start): ~15 s
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_interrupt_within_1s_leaves_the_cache_as_it_was(
    sig: int, tiny: Path, tmp_path: Path  # noqa: F811
) -> None:
    with LocalHub() as hub:
        repo = hub.repo(HUB_ID)
        repo.add(C1, tiny)
        env = env_for(tmp_path, hub.url)
        r = subprocess.run([sys.executable, "-m", "geneb", "models", "fetch", HUB_ID], env=env,
                           capture_output=True, text=True, timeout=120)  # fmt: skip
        assert r.returncode == 0, r.stderr
        cache = tmp_path / "hf-home" / "hub"
        before = snapshot_of_cache(cache)
        repo.add(C2, tiny, **{WEIGHTS: b"w" * 4_000_000, "new.txt": b"n"})
        repo.drip[WEIGHTS] = (64 * 1024, 0.05)  # ~1.3 MB/s: 3 s of download
        hub.requests.clear()
        proc = subprocess.Popen([sys.executable, "-m", "geneb", "models", "fetch", HUB_ID],
                                env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)  # fmt: skip
        _wait_for(lambda: any(p.endswith(WEIGHTS) for _, p in hub.requests))
        time.sleep(0.5)  # bytes are arriving
        staged = [p for p in cache.glob(".geneb-fetch*/*") if p.stat().st_size > 0]
        t0 = time.perf_counter()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        latency = time.perf_counter() - t0
    print(f"signal {signal.Signals(sig).name}: exited {proc.returncode} after {latency:.3f} s")
    assert staged, "the download had not started writing"
    assert proc.returncode != 0 and latency < 1.0, (proc.returncode, latency, err)
    if sig == signal.SIGKILL:  # nothing can run: only the staging folder is left ...
        assert [p.name for p in cache.iterdir() if p.name.startswith(".geneb-fetch")]
        with LocalHub() as hub:  # ... and the next fetch (of anything) removes it
            hub.repo(HUB_ID).add(C1, tiny)
            r = subprocess.run([sys.executable, "-m", "geneb", "models", "fetch", HUB_ID],
                               env=env_for(tmp_path, hub.url), capture_output=True, text=True,
                               timeout=120)  # fmt: skip
        assert r.returncode == 0, r.stderr
    else:
        assert b"Traceback" not in err, err
    assert snapshot_of_cache(cache) == before
    assert (repo_dir(cache) / "refs" / "main").read_text() == C1
