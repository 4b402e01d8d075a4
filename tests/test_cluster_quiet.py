"""Local Dask clusters started by geneb print no warning a user cannot act on (issue 19 #23):
with the default dashboard port 8787 taken (a notebook's cluster, the other cluster of the
same run), Dask used to warn "Port 8787 is already in use" once per cluster."""

from __future__ import annotations

import socket
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

import geneb


@pytest.fixture
def port_8787_taken() -> Iterator[None]:
    """Hold 127.0.0.1:8787 (or find it already held by something else)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("", 8787))
        sock.listen(1)
    except OSError:  # already in use: the condition under test holds anyway
        pass
    try:
        yield
    finally:
        sock.close()


def _port_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "already in use" in str(w.message)]


@pytest.mark.timeout(120)
def test_extraction_cluster_is_quiet(port_8787_taken: None) -> None:
    from geneb.cluster import dask_client

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with dask_client(workers=1, device="cpu") as client:
            # the HTTP server still runs (health routes), on a port the OS chose
            assert client.scheduler_info()["services"].get("dashboard", 0) != 8787
    assert _port_warnings(caught) == []


@pytest.mark.timeout(120)
def test_probe_cluster_is_quiet(tmp_path: Path, port_8787_taken: None) -> None:
    store = tmp_path / "S.zarr"
    tasks = [geneb.load_task("syn_cpg_island"), geneb.load_task("syn_tf_ctcf")]
    geneb.extract(str(store), ["kmer-2"], tasks, device="cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        summary = geneb.run_probes(store, tmp_path / "r", shots=("10",), seeds=(13,),
                                   Cs=(1.0,), workers=2)
    assert summary is not None
    assert len(geneb.read_results(tmp_path / "r")) == 2  # both (model, task) jobs ran
    assert _port_warnings(caught) == []


@pytest.mark.timeout(120)
def test_dask_client_closes_what_it_started_and_keeps_what_it_was_given() -> None:
    """The one place geneb starts a local cluster closes it after the block, also when the
    block fails; a client the caller passes in is used and left open."""
    from geneb.cluster import dask_client

    with pytest.raises(RuntimeError, match="boom"), dask_client(workers=1) as client:
        cluster = client.cluster
        assert client.submit(sum, [1, 2]).result() == 3
        raise RuntimeError("boom")
    assert client.status == "closed" and cluster.status.name == "closed"
    with dask_client(workers=1) as outer, dask_client(client=outer) as inner:
        assert inner is outer
        assert inner.submit(sum, [2, 3]).result() == 5
    assert outer.status == "closed"  # closed by the block that started it, not the inner one
