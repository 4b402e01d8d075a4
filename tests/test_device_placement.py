"""Device handling (issue 31 item 4), on CPU: the TF32 helper under both torch flag APIs,
and GPU worker placement with dask-cuda replaced by a recorder (dask-cuda's behaviour read in
rapidsai/dask-cuda @ 63a1ea97: ``LocalCUDACluster(CUDA_VISIBLE_DEVICES=..., n_workers=...)``
starts one worker per listed device, each seeing its own GPU first)."""

from __future__ import annotations

import sys
import types

import pytest

torch = pytest.importorskip("torch")

from geneb import cluster  # noqa: E402
from geneb.errors import GenebError  # noqa: E402
from geneb.models.device import tf32  # noqa: E402


def test_tf32_off_then_restored_with_the_new_api():
    b = torch.backends
    if not hasattr(b.cuda.matmul, "fp32_precision"):
        pytest.skip("torch < 2.9 has only the legacy flags")
    b.cuda.matmul.fp32_precision = "tf32"  # a user set the new API
    try:
        with tf32(False):
            assert b.cuda.matmul.fp32_precision == "ieee"
            assert b.cudnn.conv.fp32_precision == "ieee"
            assert b.cudnn.rnn.fp32_precision == "ieee"
        assert b.cuda.matmul.fp32_precision == "tf32"
    finally:
        b.cuda.matmul.fp32_precision = "none"


def test_tf32_with_only_the_legacy_flags(monkeypatch):
    matmul = types.SimpleNamespace(allow_tf32=True)
    cudnn = types.SimpleNamespace(allow_tf32=True)
    fake = types.SimpleNamespace(backends=types.SimpleNamespace(
        cuda=types.SimpleNamespace(matmul=matmul), cudnn=cudnn))
    monkeypatch.setitem(sys.modules, "torch", fake)
    with tf32(False):
        assert matmul.allow_tf32 is False and cudnn.allow_tf32 is False
    assert matmul.allow_tf32 is True and cudnn.allow_tf32 is True


@pytest.fixture
def two_gpus(monkeypatch):
    """A machine with two visible GPUs, dask-cuda recording how it is called."""
    calls: list[dict] = []

    class FakeCUDACluster:
        def __init__(self, **kw):
            calls.append(kw)

    mod = types.ModuleType("dask_cuda")
    mod.LocalCUDACluster = FakeCUDACluster
    monkeypatch.setitem(sys.modules, "dask_cuda", mod)
    monkeypatch.setattr(cluster, "gpu_count", lambda: 2)
    monkeypatch.setattr(cluster, "_client", lambda c: c)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return calls


def test_auto_on_a_gpu_machine_starts_one_worker_per_gpu(two_gpus):
    cluster.start_local(None, "auto")
    assert two_gpus[-1]["CUDA_VISIBLE_DEVICES"] == [0, 1] and two_gpus[-1]["n_workers"] == 2
    cluster.start_local(2, "cuda")
    assert two_gpus[-1]["n_workers"] == 2


def test_cuda_n_is_the_gpu_the_user_named(two_gpus, monkeypatch):
    cluster.start_local(None, "cuda:1")
    assert two_gpus[-1]["CUDA_VISIBLE_DEVICES"] == [1] and two_gpus[-1]["n_workers"] == 1
    # named in this process's view: with CUDA_VISIBLE_DEVICES=5,7, cuda:1 is physical GPU 7
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,7")
    cluster.start_local(None, "cuda:1")
    assert two_gpus[-1]["CUDA_VISIBLE_DEVICES"] == [7]
    # and the worker itself runs on its first visible device
    assert cluster.worker_device("cuda:1") == "cuda"
    assert cluster.worker_device("auto") == "auto" and cluster.worker_device("cpu") == "cpu"


def test_more_workers_than_gpus_is_one_clear_error(two_gpus):
    with pytest.raises(GenebError, match=r"workers: 3 .* 2 GPU"):
        cluster.start_local(3, "auto")
    with pytest.raises(GenebError, match=r"cuda:2 .* 2 GPU"):
        cluster.start_local(None, "cuda:2")


def test_cpu_device_or_no_gpu_starts_cpu_processes(monkeypatch):
    started = []

    class FakeLocal:
        def __init__(self, **kw):
            started.append(kw)

    import distributed

    monkeypatch.setattr(distributed, "LocalCluster", FakeLocal)
    monkeypatch.setattr(cluster, "_client", lambda c: c)
    monkeypatch.setattr(cluster, "gpu_count", lambda: 2)
    cluster.start_local(3, "cpu")
    monkeypatch.setattr(cluster, "gpu_count", lambda: 0)
    cluster.start_local(3, "auto")
    assert [kw["n_workers"] for kw in started] == [3, 3]


def test_gpu_probing_places_one_worker_per_gpu(tmp_path, monkeypatch):
    """A solver on the GPU: as many Dask workers as GPUs (not one per core on GPU 0), and
    the cluster is dask-cuda's."""
    import numpy as np
    from probe_stores import gaussian_embeddings, write_entry

    from geneb.probe import engine
    from geneb.store import FeatureStore

    fs = FeatureStore(tmp_path / "s", "a")
    for task in ("t1", "t2", "t3"):
        y = np.arange(40) % 2
        X = gaussian_embeddings(y, 4, seed=1)
        for split in ("train", "test"):
            write_entry(fs, "m", task, split, X, y, task_fingerprint=f"{task}:{split}")
    seen = {}

    def fake_run_dask(todo, store_path, args, client, n_workers, finish, bar, gpu=False):
        seen.update(n_workers=n_workers, gpu=gpu, pairs=len(todo))

    monkeypatch.setattr(engine, "runs_on_gpu", lambda *a: True)
    monkeypatch.setattr(engine, "gpu_count", lambda: 2)
    monkeypatch.setattr(engine, "run_dask", fake_run_dask)
    engine.run_probes(fs.path, tmp_path / "r", shots="full", seeds=(13,), backend="fast")
    assert seen == {"n_workers": 2, "gpu": True, "pairs": 3}
    # and the schedule asks dask_client for GPU workers
    from geneb.probe import schedule

    asked = {}

    @__import__("contextlib").contextmanager
    def fake_client(**kw):
        asked.update(kw)
        raise RuntimeError("stop here")
        yield

    monkeypatch.setattr(schedule, "dask_client", fake_client)
    with pytest.raises(RuntimeError, match="stop here"):
        schedule.run_dask([], str(fs.path), {}, None, 2, None, None, gpu=True)
    assert asked["device"] == "cuda" and asked["workers"] == 2
